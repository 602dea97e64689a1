#include "reduce/optimizer_shard.h"

#include <fmt/format.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include "reduce/replica_state.h"

namespace hpctrain::reduce {
namespace {

bool fused_kernel_applies(const at::Tensor& t) { return t.is_cpu() && t.scalar_type() == torch::kFloat32; }

// AdamW's rule in tensor operations, LibTorch's own order, for shards off the CPU.
void adamw_update_tensors(const torch::optim::AdamWOptions& o, std::int64_t step, float grad_scale,
                          const at::Tensor& param, const at::Tensor& grad, const at::Tensor& exp_avg,
                          const at::Tensor& exp_avg_sq) {
  const auto [beta1, beta2] = o.betas();
  const at::Tensor g = grad_scale == 1 ? grad : grad * grad_scale;
  param.mul_(1 - o.lr() * o.weight_decay());
  exp_avg.mul_(beta1).add_(g, 1 - beta1);
  exp_avg_sq.mul_(beta2).addcmul_(g, g, 1 - beta2);
  const double correction1 = 1 - std::pow(beta1, static_cast<double>(step));
  const double correction2 = 1 - std::pow(beta2, static_cast<double>(step));
  const at::Tensor denom = (exp_avg_sq.sqrt() / std::sqrt(correction2)).add_(o.eps());
  param.addcdiv_(exp_avg, denom, -o.lr() / correction1);
}

}  // namespace

std::int64_t shard_numel(std::int64_t numel, int world) { return (numel + world - 1) / world; }

OptimizerShard::OptimizerShard(std::vector<BucketLayout> buckets, model::LanguageModel& model, optim::AdamW& optimizer,
                               comm::Communicator& comm, comm::Communicator& control)
    : model_(model),
      params_(model.parameters()),
      steps_(params_.size(), 0),
      optimizer_(optimizer),
      comm_(comm),
      control_(control),
      rank_(comm.rank()) {
  std::unordered_map<const void*, std::size_t> group_by_param;
  const auto& groups = optimizer.param_groups();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (static_cast<const torch::optim::AdamWOptions&>(groups[g].options()).amsgrad()) {
      throw std::invalid_argument("parallel.zero = 1 does not support AMSGrad");
    }
    for (const auto& p : groups[g].params()) group_by_param[p.unsafeGetTensorImpl()] = g;
  }
  group_of_.resize(params_.size());
  for (std::size_t i = 0; i < params_.size(); ++i) {
    const auto it = group_by_param.find(params_[i].unsafeGetTensorImpl());
    if (it == group_by_param.end()) throw std::invalid_argument(fmt::format("parameter {} has no optimizer group", i));
    group_of_[i] = it->second;
  }
  torch::NoGradGuard no_grad;
  for (auto& layout : buckets) {
    Bucket bucket;
    const std::int64_t begin = rank_ * layout.shard_numel;
    const std::int64_t end = begin + layout.shard_numel;
    bucket.weights = torch::zeros({layout.shard_numel * comm_.size()}, params_.front().options());
    std::int64_t offset = 0;
    for (const std::size_t i : layout.params) {
      const std::int64_t n = params_[i].numel();
      const std::int64_t lo = std::max(offset, begin);
      const std::int64_t hi = std::min(offset + n, end);
      if (lo < hi) bucket.segments.push_back({i, lo - offset, lo - begin, hi - lo});
      // The weights move into the bucket (the same tensor, now a view), so
      // the allgather writes every rank's update in place.
      at::Tensor view = bucket.weights.narrow(0, offset, n);
      view.copy_(params_[i].reshape({-1}));
      params_[i].set_data(view.view_as(params_[i]));
      offset += n;
    }
    bucket.exp_avg = torch::zeros({layout.shard_numel}, params_.front().options());
    bucket.exp_avg_sq = torch::zeros({layout.shard_numel}, params_.front().options());
    bucket.layout = std::move(layout);
    buckets_.push_back(std::move(bucket));
  }
}

double OptimizerShard::squared_norm(const std::vector<at::Tensor>& grads) const {
  double sum = 0;
  for (const auto& g : grads) {
    if (fused_kernel_applies(g) && g.is_contiguous()) {
      const float* x = g.data_ptr<float>();
      for (std::int64_t k = 0; k < g.numel(); ++k) sum += static_cast<double>(x[k]) * x[k];
    } else {
      sum += g.to(torch::kFloat64).square().sum().item<double>();
    }
  }
  return sum;
}

optim::GradClip OptimizerShard::step(const std::vector<at::Tensor>& grads, double max_norm) {
  optim::GradClip clip;
  if (max_norm > 0) {
    // The shards partition the gradients: their squared norms add up to the
    // whole one's. A float on the host, over the control communicator.
    auto squared = static_cast<float>(squared_norm(grads));
    control_.allreduce(&squared, 1, comm::DType::kFloat32, comm::ReduceOp::kSum);
    clip.norm = std::sqrt(static_cast<double>(squared));
    // torch::nn::utils::clip_grad_norm_'s factor, in float as it computes it.
    clip.scale = std::min(1.0F, static_cast<float>(max_norm) / (static_cast<float>(clip.norm) + 1e-6F));
  }
  adam_step(grads, clip.scale);
  allgather_weights();
  return clip;
}

void OptimizerShard::allgather_weights() {
  // Every bucket's allgather in flight at once, in bucket order on every rank.
  std::vector<comm::WorkPtr> gathers;
  const torch::NoGradGuard no_grad;
  for (Bucket& bucket : buckets_) {
    const auto shard = static_cast<std::size_t>(bucket.layout.shard_numel);
    auto* all = static_cast<float*>(bucket.weights.data_ptr());
    gathers.push_back(
        comm_.allgather_async(all + shard * static_cast<std::size_t>(rank_), all, shard, comm::DType::kFloat32));
  }
  for (auto& work : gathers) work->wait();
}

void OptimizerShard::save(ckpt::Snapshot& snapshot) const {
  if (!snapshot.sharded) {
    // The same layout as without ZeRO-1: the shards gathered whole on rank 0.
    optim::AdamState whole = gather();
    if (control_.rank() == 0) {
      ckpt::add_parameters(snapshot, "model", model_);
      add_adam_state(snapshot, "optimizer", std::move(whole), model_);
    }
    return;
  }
  // Each rank its share of the weights and the moments it holds, as pieces;
  // rank 0 the step counts, which every rank shares.
  ckpt::add_parameters(snapshot, "model", model_, owned_parameters(model_, control_.rank(), control_.size()));
  std::vector<std::string> names;
  for (const auto& item : model_.named_parameters()) names.push_back(item.key());
  for (auto& piece : pieces()) {
    snapshot.tensors.emplace_back(moment_piece_name("optimizer", "exp_avg", names[piece.param], piece.first),
                                  std::move(piece.exp_avg));
    snapshot.tensors.emplace_back(moment_piece_name("optimizer", "exp_avg_sq", names[piece.param], piece.first),
                                  std::move(piece.exp_avg_sq));
  }
  if (control_.rank() != 0) return;
  for (std::size_t i = 0; i < names.size(); ++i) {
    snapshot.tensors.emplace_back("optimizer/step/" + names[i], torch::full({1}, steps_[i], torch::kInt64));
  }
}

void OptimizerShard::load(const ckpt::CheckpointReader& checkpoint) {
  ckpt::load_parameters(checkpoint.file(), "model", model_);
  load(read_adam_state(checkpoint, "optimizer", model_));
}

void OptimizerShard::adam_step(const std::vector<at::Tensor>& grads, float grad_scale) {
  torch::NoGradGuard no_grad;
  for (auto& s : steps_) ++s;  // every parameter has a gradient under DDP
  const auto& groups = optimizer_.param_groups();
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    const std::int64_t shard_start = rank_ * bucket.layout.shard_numel;
    for (const Segment& seg : bucket.segments) {
      const auto& options = static_cast<const torch::optim::AdamWOptions&>(groups[group_of_[seg.param]].options());
      at::Tensor p = bucket.weights.narrow(0, shard_start + seg.shard_offset, seg.length);
      const at::Tensor g = grads[b].narrow(0, seg.shard_offset, seg.length);
      at::Tensor m = bucket.exp_avg.narrow(0, seg.shard_offset, seg.length);
      at::Tensor v = bucket.exp_avg_sq.narrow(0, seg.shard_offset, seg.length);
      if (fused_kernel_applies(p) && fused_kernel_applies(g)) {
        optim::adamw_update(options, steps_[seg.param], grad_scale, p.data_ptr<float>(), g.data_ptr<float>(),
                            m.data_ptr<float>(), v.data_ptr<float>(), seg.length);
      } else {
        adamw_update_tensors(options, steps_[seg.param], grad_scale, p, g, m, v);
      }
    }
  }
}

optim::AdamState OptimizerShard::gather() const {
  optim::AdamState whole;
  comm::Communicator& comm = comm_;
  const bool root = comm.rank() == 0;
  if (root) {
    for (const auto& p : params_) {
      whole.exp_avg.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
      whole.exp_avg_sq.push_back(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
    }
    whole.steps = steps_;
  }
  // One bucket at a time: the transient buffer is one padded bucket, not the model.
  for (const Bucket& bucket : buckets_) {
    const std::int64_t shard = bucket.layout.shard_numel;
    at::Tensor all = torch::empty({shard * comm.size()}, bucket.exp_avg.options());
    for (const bool second : {false, true}) {
      const at::Tensor& mine = second ? bucket.exp_avg_sq : bucket.exp_avg;
      comm.allgather(mine.data_ptr(), all.data_ptr(), static_cast<std::size_t>(shard), comm::DType::kFloat32);
      if (!root) continue;
      std::int64_t offset = 0;
      for (const std::size_t i : bucket.layout.params) {
        const std::int64_t n = params_[i].numel();
        (second ? whole.exp_avg_sq : whole.exp_avg)[i].view({-1}).copy_(all.narrow(0, offset, n));
        offset += n;
      }
    }
  }
  return whole;
}

void OptimizerShard::load(const optim::AdamState& whole) {
  torch::NoGradGuard no_grad;
  steps_ = whole.steps;
  for (Bucket& bucket : buckets_) {
    bucket.exp_avg.zero_();
    bucket.exp_avg_sq.zero_();
    for (const Segment& seg : bucket.segments) {
      bucket.exp_avg.narrow(0, seg.shard_offset, seg.length)
          .copy_(whole.exp_avg[seg.param].reshape({-1}).narrow(0, seg.param_offset, seg.length));
      bucket.exp_avg_sq.narrow(0, seg.shard_offset, seg.length)
          .copy_(whole.exp_avg_sq[seg.param].reshape({-1}).narrow(0, seg.param_offset, seg.length));
    }
  }
}

std::vector<OptimizerShard::Piece> OptimizerShard::pieces() const {
  std::vector<Piece> out;
  for (const Bucket& bucket : buckets_) {
    for (const Segment& seg : bucket.segments) {
      out.push_back({seg.param, seg.param_offset,
                     bucket.exp_avg.narrow(0, seg.shard_offset, seg.length).to(torch::kCPU).contiguous().clone(),
                     bucket.exp_avg_sq.narrow(0, seg.shard_offset, seg.length).to(torch::kCPU).contiguous().clone()});
    }
  }
  return out;
}

std::int64_t OptimizerShard::state_bytes() const {
  std::int64_t bytes = 0;
  for (const Bucket& bucket : buckets_) {
    bytes += (bucket.exp_avg.numel() + bucket.exp_avg_sq.numel()) * static_cast<std::int64_t>(sizeof(float));
  }
  return bytes;
}

}  // namespace hpctrain::reduce
