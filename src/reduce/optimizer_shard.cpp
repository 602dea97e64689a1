#include "reduce/optimizer_shard.h"

#include <fmt/format.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <stdexcept>
#include <unordered_map>
#include <utility>

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

OptimizerShard::OptimizerShard(std::vector<BucketLayout> buckets, const model::LanguageModel& model,
                               optim::AdamW& optimizer, int rank)
    : params_(model.parameters()), steps_(params_.size(), 0), optimizer_(optimizer), rank_(rank) {
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
    std::int64_t offset = 0;
    for (const std::size_t i : layout.params) {
      const std::int64_t n = params_[i].numel();
      const std::int64_t lo = std::max(offset, begin);
      const std::int64_t hi = std::min(offset + n, end);
      if (lo < hi) bucket.segments.push_back({i, lo - offset, lo - begin, hi - lo});
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

void OptimizerShard::step(const std::vector<at::Tensor>& grads, const std::vector<at::Tensor>& weights,
                          float grad_scale) {
  torch::NoGradGuard no_grad;
  for (auto& s : steps_) ++s;  // every parameter has a gradient under DDP
  const auto& groups = optimizer_.param_groups();
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    Bucket& bucket = buckets_[b];
    const std::int64_t shard_start = rank_ * bucket.layout.shard_numel;
    for (const Segment& seg : bucket.segments) {
      const auto& options = static_cast<const torch::optim::AdamWOptions&>(groups[group_of_[seg.param]].options());
      at::Tensor p = weights[b].narrow(0, shard_start + seg.shard_offset, seg.length);
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

optim::AdamState OptimizerShard::gather(comm::Communicator& comm) const {
  optim::AdamState whole;
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
