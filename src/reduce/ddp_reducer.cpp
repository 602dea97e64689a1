#include "reduce/ddp_reducer.h"

#include <fmt/format.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>

#include "ckpt/checkpoint.h"
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
  const bool zero = parallel_.zero == 1;
  const auto bf16 = params_.front().options().dtype(torch::kBFloat16);
  buckets_.resize(groups.size());
  std::vector<BucketLayout> layouts;
  for (std::size_t b = 0; b < groups.size(); ++b) {
    Bucket& bucket = buckets_[b];
    std::int64_t numel = 0;
    for (std::size_t i : groups[b]) numel += params_[i].numel();
    const std::int64_t shard = shard_numel(numel, comm_.size());
    const std::int64_t padded = zero ? shard * comm_.size() : numel;
    bucket.flat = torch::zeros({padded}, params_.front().options());
    if (parallel_.bf16_compression) bucket.wire = torch::empty({padded}, bf16);
    if (zero) {
      bucket.shard = torch::zeros({shard}, bucket.flat.options());
      if (parallel_.bf16_compression) bucket.shard_wire = torch::empty({shard}, bf16);
      bucket.weights = torch::zeros({padded}, bucket.flat.options());
      layouts.push_back({groups[b], shard});
    }
    bucket.params = groups[b];
    std::int64_t offset = 0;
    for (std::size_t i : groups[b]) {
      bucket_of_[i] = b;
      const std::int64_t n = params_[i].numel();
      if (zero) {
        // The weights move into the bucket (the same tensor, now a view), so
        // the allgather writes every rank's update in place.
        const torch::NoGradGuard no_grad;
        at::Tensor view = bucket.weights.narrow(0, offset, n);
        view.copy_(params_[i].reshape({-1}));
        params_[i].set_data(view.view_as(params_[i]));
      }
      // The gradient is a view into the bucket: AccumulateGrad adds in place.
      params_[i].mutable_grad() = bucket.flat.narrow(0, offset, n).view_as(params_[i]);
      offset += n;
    }
  }
  if (zero) shard_ = std::make_unique<OptimizerShard>(std::move(layouts), model_, optimizer_, comm_.rank());
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
  return fmt::format("reducer ddp: {} buckets, {} with backward{}{}", buckets_.size(),
                     parallel_.overlap ? "overlapped" : "not overlapped",
                     parallel_.bf16_compression ? ", bf16 on the wire" : "",
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

optim::GradClip DdpReducer::optimizer_step(optim::AdamW& optimizer, double max_norm) {
  if (!shard_) return Reducer::optimizer_step(optimizer, max_norm);
  std::vector<at::Tensor> grads;
  std::vector<at::Tensor> weights;
  for (const Bucket& bucket : buckets_) {
    grads.push_back(bucket.shard);
    weights.push_back(bucket.weights);
  }
  optim::GradClip clip;
  if (max_norm > 0) {
    // The shards partition the gradients: their squared norms add up to the
    // whole one's. A float on the host, over the control communicator.
    auto squared = static_cast<float>(shard_->squared_norm(grads));
    control_.allreduce(&squared, 1, comm::DType::kFloat32, comm::ReduceOp::kSum);
    clip.norm = std::sqrt(static_cast<double>(squared));
    // torch::nn::utils::clip_grad_norm_'s factor, in float as it computes it.
    clip.scale = std::min(1.0F, static_cast<float>(max_norm) / (static_cast<float>(clip.norm) + 1e-6F));
  }
  shard_->step(grads, weights, clip.scale);
  // Every bucket's allgather in flight at once, in bucket order on every rank.
  std::vector<comm::WorkPtr> gathers;
  const torch::NoGradGuard no_grad;
  for (Bucket& bucket : buckets_) {
    const auto shard = static_cast<std::size_t>(bucket.shard.numel());
    auto* all = static_cast<float*>(bucket.weights.data_ptr());
    gathers.push_back(
        comm_.allgather_async(all + shard * static_cast<std::size_t>(comm_.rank()), all, shard, comm::DType::kFloat32));
  }
  for (auto& work : gathers) work->wait();
  return clip;
}

void DdpReducer::after_optimizer_step(std::int64_t step, bool /*epoch_end*/) {
  if (parallel_.check_replicas_every > 0 && step % parallel_.check_replicas_every == 0) {
    check_replicas(model_, control_, step);
  }
}

void DdpReducer::save(ckpt::Snapshot& snapshot) {
  const int rank = control_.rank();
  const int ranks = control_.size();
  if (snapshot.sharded && shard_) {
    // Each rank its share of the weights and the moments it holds, as
    // pieces; rank 0 the step counts, which every rank shares.
    ckpt::add_parameters(snapshot, "model", model_, owned_parameters(model_, rank, ranks));
    std::vector<std::string> names;
    for (const auto& item : model_.named_parameters()) names.push_back(item.key());
    for (auto& piece : shard_->pieces()) {
      snapshot.tensors.emplace_back(moment_piece_name("optimizer", "exp_avg", names[piece.param], piece.first),
                                    std::move(piece.exp_avg));
      snapshot.tensors.emplace_back(moment_piece_name("optimizer", "exp_avg_sq", names[piece.param], piece.first),
                                    std::move(piece.exp_avg_sq));
    }
    if (rank == 0) {
      for (std::size_t i = 0; i < names.size(); ++i) {
        snapshot.tensors.emplace_back("optimizer/step/" + names[i],
                                      torch::full({1}, shard_->steps()[i], torch::kInt64));
      }
    }
    return;
  }
  if (snapshot.sharded) {
    // The replicas are identical: each rank writes its share of them.
    save_replica_shard(snapshot, "model", "optimizer", model_, optimizer_, rank, ranks);
    return;
  }
  if (shard_) {
    // The same layout as without ZeRO-1: the shards gathered whole on rank 0.
    optim::AdamState whole = shard_->gather(comm_);
    if (control_.rank() == 0) {
      ckpt::add_parameters(snapshot, "model", model_);
      add_adam_state(snapshot, "optimizer", std::move(whole), model_);
    }
    return;
  }
  // The replicas are identical: rank 0's state is everyone's.
  if (control_.rank() == 0) save_replica(snapshot, "model", "optimizer", model_, optimizer_);
}

void DdpReducer::load(const ckpt::CheckpointReader& checkpoint) {
  if (shard_) {
    // Every rank reads the whole state and keeps its shard: any world size,
    // with or without ZeRO-1 before, continues.
    ckpt::load_parameters(checkpoint.file(), "model", model_);
    shard_->load(read_adam_state(checkpoint, "optimizer", model_));
    return;
  }
  load_replica(checkpoint, "model", "optimizer", model_, optimizer_);
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
  Bucket& bucket = buckets_[next_to_launch_++];
  lock.unlock();
  reduce_bucket(bucket);
  lock.lock();
  ++reduced_;
}

void DdpReducer::reduce_bucket(Bucket& bucket) {
  // Either thread may get here; the bf16 copies must never be recorded.
  const torch::NoGradGuard no_grad;
  const auto n = static_cast<std::size_t>(bucket.flat.numel());
  if (shard_) {
    const auto shard = static_cast<std::size_t>(bucket.shard.numel());
    if (parallel_.bf16_compression) {
      bucket.wire.copy_(bucket.flat);
      comm_.reduce_scatter(bucket.wire.data_ptr(), bucket.shard_wire.data_ptr(), shard, comm::DType::kBFloat16,
                           comm::ReduceOp::kSum);
      bucket.shard.copy_(bucket.shard_wire);
    } else {
      comm_.reduce_scatter(bucket.flat.data_ptr(), bucket.shard.data_ptr(), shard, comm::DType::kFloat32,
                           comm::ReduceOp::kSum);
    }
    return;
  }
  if (parallel_.bf16_compression) {
    bucket.wire.copy_(bucket.flat);
    comm_.allreduce(bucket.wire.data_ptr(), n, comm::DType::kBFloat16, comm::ReduceOp::kSum);
    bucket.flat.copy_(bucket.wire);
  } else {
    comm_.allreduce(bucket.flat.data_ptr(), n, comm::DType::kFloat32, comm::ReduceOp::kSum);
  }
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
