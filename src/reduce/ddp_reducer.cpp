#include "reduce/ddp_reducer.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "ckpt/checkpoint.h"
#include "reduce/ddp_residuals.h"
#include "reduce/replica_check.h"
#include "reduce/replica_state.h"

namespace hpctrain::reduce {
namespace {

// Runs after a parameter's AccumulateGrad node: its gradient is final for this backward.
class ReadyHook final : public torch::autograd::FunctionPostHook {
 public:
  ReadyHook(std::function<void()> ready) : ready_(std::move(ready)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    ready_();
    return outputs;
  }

 private:
  std::function<void()> ready_;
};

}  // namespace

DdpReducer::DdpReducer(const config::ParallelConfig& parallel, model::LanguageModel& model, optim::AdamW& optimizer,
                       comm::Communicator& gradients, comm::Communicator& control,
                       std::unique_ptr<comm::Communicator> owned)
    : Reducer(model, optimizer),
      parallel_(parallel),
      owned_(std::move(owned)),
      comm_(gradients),
      control_(control),
      params_(model.parameters()) {
  const auto first_bucket_bytes = static_cast<std::size_t>(parallel_.first_bucket_mb * (1 << 20));
  const auto bucket_cap_bytes = static_cast<std::size_t>(parallel_.bucket_cap_mb * (1 << 20));
  {
    torch::NoGradGuard no_grad;
    for (auto& p : params_)
      comm_.broadcast(p.data_ptr(), static_cast<std::size_t>(p.numel()), comm::DType::kFloat32, 0);
  }
  // Buckets in reverse registration order: backward produces late layers first.
  bucket_of_.resize(params_.size());
  std::vector<std::vector<std::size_t>> groups;
  std::size_t bytes = 0;
  for (std::size_t i = params_.size(); i-- > 0;) {
    const std::size_t cap = groups.size() <= 1 ? first_bucket_bytes : bucket_cap_bytes;
    const std::size_t param_bytes = static_cast<std::size_t>(params_[i].numel()) * sizeof(float);
    if (groups.empty() || (bytes > 0 && bytes + param_bytes > cap)) {
      groups.emplace_back();
      bytes = 0;
    }
    groups.back().push_back(i);
    bytes += param_bytes;
  }
  if (parallel_.zero == 1) {
    std::vector<BucketLayout> layouts;
    for (const auto& group : groups) {
      std::int64_t numel = 0;
      for (std::size_t i : group) numel += params_[i].numel();
      layouts.push_back({group, shard_numel(numel, comm_.size())});
    }
    // Moves the parameters into padded weight buffers, one per bucket.
    shard_ = std::make_unique<OptimizerShard>(std::move(layouts), model_, optimizer_, comm_, control_);
  }
  wire_ = make_gradient_wire(parallel_, comm_);
  buckets_.resize(groups.size());
  for (std::size_t b = 0; b < groups.size(); ++b) {
    Bucket& bucket = buckets_[b];
    std::int64_t numel = 0;
    for (std::size_t i : groups[b]) numel += params_[i].numel();
    bucket.flat = torch::zeros({wire_->padded_numel(numel)}, params_.front().options());
    wire_->add_bucket(bucket.flat);
    bucket.params = groups[b];
    std::int64_t offset = 0;
    for (std::size_t i : groups[b]) {
      bucket_of_[i] = b;
      const std::int64_t n = params_[i].numel();
      // The gradient is a view into the bucket: AccumulateGrad adds in place.
      params_[i].mutable_grad() = bucket.flat.narrow(0, offset, n).view_as(params_[i]);
      offset += n;
    }
  }
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params_[i]);
    accumulator->add_post_hook(std::make_unique<ReadyHook>([this, i] { on_gradient_ready(i); }));
    accumulators_.push_back(std::move(accumulator));
  }
  begin_step();
  thread_ = std::thread([this] { communication_loop(); });
}

DdpReducer::~DdpReducer() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  bucket_ready_.notify_one();
  thread_.join();
}

std::string DdpReducer::describe() const {
  return fmt::format("reducer ddp: {} buckets, {} with backward, {}{}", buckets_.size(),
                     parallel_.overlap ? "overlapped" : "not overlapped", wire_->describe(),
                     shard_ ? fmt::format(", ZeRO-1: AdamW state sharded over {} ranks ({:.1f} MiB on this one)",
                                          comm_.size(), static_cast<double>(optimizer_state_bytes()) / (1 << 20))
                            : fmt::format(", AdamW state {:.1f} MiB on every rank",
                                          static_cast<double>(optimizer_state_bytes()) / (1 << 20)));
}

std::int64_t DdpReducer::optimizer_state_bytes() const {
  if (shard_) return shard_->state_bytes();
  std::int64_t bytes = 0;
  for (const auto& p : params_) bytes += 2 * p.numel() * static_cast<std::int64_t>(sizeof(float));
  return bytes;
}

optim::GradClip DdpReducer::step_optimizer(double max_norm) {
  if (!shard_) return Reducer::step_optimizer(max_norm);
  std::vector<at::Tensor> grads;
  for (std::size_t b = 0; b < buckets_.size(); ++b) grads.push_back(wire_->summed(b));
  return shard_->step(grads, max_norm);
}

void DdpReducer::after_optimizer_step(std::int64_t step, bool /*epoch_end*/) {
  if (parallel_.check_replicas_every > 0 && step % parallel_.check_replicas_every == 0) {
    check_replicas(model_, control_, step);
  }
}

void DdpReducer::save(ckpt::Snapshot& snapshot) {
  save_ddp_residual(snapshot, wire_->residual(), control_);  // every rank's own, where the codec keeps one
  if (shard_) {
    // ZeRO-1 gathers its moments over the gradients' communicator (it
    // reaches their device); that is a checkpoint's traffic, not training's.
    const std::uint64_t before = comm_.bytes_sent();
    shard_->save(snapshot);
    checkpoint_bytes_ += comm_.bytes_sent() - before;
  } else if (snapshot.sharded) {
    // The replicas are identical: each rank writes its share of them.
    save_replica_shard(snapshot, "model", "optimizer", model_, optimizer_, control_.rank(), control_.size());
  } else if (control_.rank() == 0) {
    // The replicas are identical: rank 0's state is everyone's.
    save_replica(snapshot, "model", "optimizer", model_, optimizer_);
  }
}

void DdpReducer::load(const ckpt::CheckpointReader& checkpoint) {
  if (shard_) {
    shard_->load(checkpoint);
  } else {
    load_replica(checkpoint, "model", "optimizer", model_, optimizer_);
  }
  if (parallel_.gradient_wire != config::WireCodec::kFp32) {
    std::int64_t numel = 0;
    for (const auto& bucket : buckets_) numel += bucket.flat.numel();
    wire_->set_residual(load_ddp_residual(checkpoint, numel, control_.rank(), control_.size()));
  }
}

std::vector<std::string> DdpReducer::incompatibilities(const ckpt_file::CheckpointInfo& info) const {
  // One replica continues at any world size (the sampler's global order does not depend on it).
  if (info.reducer == "ddp") return {};
  return {fmt::format("parallel.reducer: checkpoint {} vs run ddp", info.reducer)};
}

void DdpReducer::begin_step() {
  const std::lock_guard lock(mutex_);
  for (auto& b : buckets_) {
    b.flat.zero_();
    b.pending = b.params.size();
    b.ready = false;
  }
  next_to_launch_ = 0;
  reduced_ = 0;
}

void DdpReducer::on_gradient_ready(std::size_t param) {
  if (!sync_ || !parallel_.overlap) return;
  const std::lock_guard lock(mutex_);
  Bucket& bucket = buckets_[bucket_of_[param]];
  if (bucket.pending > 0 && --bucket.pending == 0) {
    mark_ready(bucket_of_[param]);
    ++launched_by_hooks_;
  }
}

void DdpReducer::mark_ready(std::size_t bucket) {
  buckets_[bucket].ready = true;
  bucket_ready_.notify_one();
}

void DdpReducer::end_backward() {
  std::unique_lock lock(mutex_);
  finishing_ = true;
  // Parameters the loss did not reach, or overlap off: their buckets go now,
  // from this thread, so the communication thread is not woken for them.
  for (auto& bucket : buckets_) bucket.ready = true;
  while (reduced_ < buckets_.size()) {
    if (in_flight()) {
      handed_over_.wait(lock, [&] { return !in_flight(); });
    } else {
      reduce_next(lock);
    }
  }
  finishing_ = false;
}

void DdpReducer::reduce_next(std::unique_lock<std::mutex>& lock) {
  const std::size_t bucket = next_to_launch_++;
  lock.unlock();
  wire_->reduce(bucket);
  lock.lock();
  ++reduced_;
}

void DdpReducer::communication_loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    // Strictly in bucket order: the same collective sequence on every rank.
    bucket_ready_.wait(lock, [&] {
      return stopping_ || (!finishing_ && next_to_launch_ < buckets_.size() && buckets_[next_to_launch_].ready);
    });
    if (stopping_) return;
    reduce_next(lock);
    if (finishing_) handed_over_.notify_one();
  }
}

}  // namespace hpctrain::reduce
