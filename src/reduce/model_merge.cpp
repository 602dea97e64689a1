#include "reduce/model_merge.h"

#include <torch/types.h>

namespace hpctrain::reduce {
namespace {

void allreduce_sum(at::Tensor& t, comm::Communicator& comm) {
  comm.allreduce(t.data_ptr(), static_cast<std::size_t>(t.numel()), comm::DType::kFloat32, comm::ReduceOp::kSum);
}

// ties: where a rank's Δ takes part (its sign is the elected one, and it is not 0).
at::Tensor agrees_with(const at::Tensor& delta, const at::Tensor& elected) {
  return (torch::sign(delta) == elected) & (delta != 0);
}

// ties: the mean of the agreeing Δ, 0 where no rank agrees.
at::Tensor disjoint_mean(const at::Tensor& agreeing_sum, const at::Tensor& count) {
  return torch::where(count > 0, agreeing_sum / count.clamp_min(1), torch::zeros_like(agreeing_sum));
}

}  // namespace

at::Tensor merged_delta(const at::Tensor& delta, const MergeRule& rule, comm::Communicator& comm) {
  if (rule.kind != config::MergeKind::kTies) {
    at::Tensor mean = delta.contiguous().clone();
    comm.allreduce(mean.data_ptr(), static_cast<std::size_t>(mean.numel()), comm::DType::kFloat32,
                   comm::ReduceOp::kAverage);
    return mean;
  }
  at::Tensor total = delta.contiguous().clone();
  allreduce_sum(total, comm);
  const at::Tensor agrees = agrees_with(delta, torch::sign(total));
  at::Tensor agreeing = torch::where(agrees, delta, torch::zeros_like(delta)).contiguous();
  at::Tensor count = agrees.to(torch::kFloat32).contiguous();
  allreduce_sum(agreeing, comm);
  allreduce_sum(count, comm);
  return disjoint_mean(agreeing, count);
}

at::Tensor merged_delta(int ranks, const std::function<at::Tensor(int)>& delta, const MergeRule& rule) {
  // Every sum starts from zeros, as the reference does (0 + -0 is +0).
  at::Tensor total;
  for (int r = 0; r < ranks; ++r) {
    const at::Tensor d = delta(r);
    if (r == 0) total = torch::zeros_like(d);
    total += d;
  }
  if (rule.kind != config::MergeKind::kTies) return total / static_cast<double>(ranks);
  const at::Tensor elected = torch::sign(total);
  at::Tensor agreeing = torch::zeros_like(total);
  at::Tensor count = torch::zeros_like(total);
  total = at::Tensor();
  for (int r = 0; r < ranks; ++r) {
    const at::Tensor d = delta(r);
    const at::Tensor agrees = agrees_with(d, elected);
    agreeing += torch::where(agrees, d, torch::zeros_like(d));
    count += agrees.to(torch::kFloat32);
  }
  return disjoint_mean(agreeing, count);
}

at::Tensor next_anchor(const at::Tensor& anchor, const at::Tensor& merged, const MergeRule& rule,
                       at::Tensor& momentum) {
  if (rule.kind != config::MergeKind::kDiloco) return anchor + merged;
  const at::Tensor g = -merged;
  if (!momentum.defined()) momentum = torch::zeros_like(anchor);
  momentum.mul_(rule.outer_momentum).add_(g);
  return anchor - rule.outer_lr * (g + rule.outer_momentum * momentum);
}

void step_anchor(at::Tensor& anchor, FlatRange range, const at::Tensor& merged, const MergeRule& rule,
                 at::Tensor& momentum) {
  if (rule.kind == config::MergeKind::kDiloco && !momentum.defined()) momentum = torch::zeros_like(anchor);
  // Views: next_anchor updates the momentum's values in place through them.
  at::Tensor part_momentum = momentum.defined() ? momentum.narrow(0, range.begin, range.size()) : at::Tensor();
  const at::Tensor part = anchor.narrow(0, range.begin, range.size());
  part.copy_(next_anchor(part, merged, rule, part_momentum));
}

void rebase_on_anchor(at::Tensor& theta, const at::Tensor& anchor, FlatRange range, const at::Tensor& at_start) {
  const at::Tensor part = theta.narrow(0, range.begin, range.size());
  part.copy_(anchor.narrow(0, range.begin, range.size()) + (part - at_start));
}

}  // namespace hpctrain::reduce
