#include "reduce/ddap_reshard.h"

#include <fmt/format.h>
#include <torch/types.h>

#include <string>
#include <vector>

#include "reduce/flat_parameters.h"
#include "reduce/replica_state.h"

namespace hpctrain::reduce {
namespace {

optim::AdamState adam_from_flat(const at::Tensor& moments, const model::LanguageModel& model,
                                std::vector<std::int64_t> steps) {
  optim::AdamState adam;
  for (const auto& p : model.parameters()) adam.exp_avg.push_back(torch::zeros_like(p, torch::kCPU));
  for (const auto& p : model.parameters()) adam.exp_avg_sq.push_back(torch::zeros_like(p, torch::kCPU));
  unflatten_into(moments, moments_in_order(adam));
  adam.steps = std::move(steps);
  return adam;
}

}  // namespace

DdapResume merge_checkpoint_replicas(const ckpt::CheckpointReader& c, const model::LanguageModel& model,
                                     const MergeRule& rule) {
  const std::int64_t ranks = c.info().world_size;
  if (ranks < 1 || ranks > (1 << 20))
    throw ckpt::CheckpointError(fmt::format("{}: world_size {} is not a rank count", c.name(), ranks));
  const std::int64_t n = model.parameter_count();
  DdapState d;
  d.anchor = c.tensor("ddap/anchor", n, torch::kFloat32);
  if (c.has("ddap/momentum")) d.momentum = c.tensor("ddap/momentum", n, torch::kFloat32);
  d.merges = c.integer("ddap_merges", 0);
  d.last_step = c.integer("ddap_last_step", 0);
  d.last_merge_applied_for = c.integer("ddap_last_merge_applied_for", -1);
  const std::int64_t started_at = c.integer("ddap_started_at", -1);

  // 1. The merge in flight: the anchor it gives; each replica takes it below.
  // A streaming run's merge moves one fragment: the slices of the anchor, the
  // outer momentum and the replicas that `range` names.
  const bool in_flight = started_at >= 0;
  const FlatRange range = in_flight ? merge_in_flight_range(c, n) : FlatRange{0, n};
  at::Tensor merged_moments;
  if (in_flight) {
    step_anchor(d.anchor, range, c.tensor("ddap/merged", range.size(), torch::kFloat32), rule, d.momentum);
    if (range.size() == n) d.last_merge_applied_for = started_at;
    if (c.has("ddap/merged_moments")) merged_moments = c.tensor("ddap/merged_moments", 2 * n, torch::kFloat32);
    ++d.merges;
  }
  // Rank r's replica and moments as it holds them once that merge is applied,
  // read when needed: one replica in memory at a time, whatever the world size.
  const auto replica = [&](int r) {
    at::Tensor theta = ckpt::read_flat_parameters(c, ddap_replica_group(r) + "/model", model);
    if (in_flight) {
      rebase_on_anchor(theta, d.anchor, range,
                       c.tensor(ddap_replica_group(r) + "/ddap_theta_at_start", range.size(), torch::kFloat32));
    }
    return theta;
  };
  std::vector<std::int64_t> steps;
  const auto replica_moments = [&](int r) {
    const std::string group = ddap_replica_group(r);
    const optim::AdamState adam = read_adam_state(c, group + "/optimizer", model);
    if (r == 0) {
      steps = adam.steps;
    } else if (adam.steps != steps) {
      throw ckpt::CheckpointError(
          fmt::format("{}: {} has taken other optimizer step counts than rank 0's replica", c.name(), group));
    }
    at::Tensor m = flatten(moments_in_order(adam));
    if (merged_moments.defined()) {
      m = merged_moments + (m - c.tensor(group + "/ddap_moments_at_start", 2 * n, torch::kFloat32));
      m.narrow(0, n, n).clamp_min_(0);
    }
    return m;
  };
  const int count = static_cast<int>(ranks);

  // 2. A merge of the replicas, unless every one is the anchor.
  bool diverged = false;
  const at::Tensor anchor = d.anchor;
  const at::Tensor merged = merged_delta(
      count,
      [&](int r) {
        const at::Tensor theta = replica(r);
        diverged = diverged || !theta.equal(anchor);
        return theta - anchor;
      },
      rule);
  if (diverged) {
    d.anchor = next_anchor(anchor, merged, rule, d.momentum);
    d.last_merge_applied_for = d.last_step;
    ++d.merges;
  }

  // 3. The moments' mean.
  at::Tensor mean = replica_moments(0);
  for (int r = 1; r < count; ++r) mean += replica_moments(r);
  mean /= static_cast<double>(ranks);

  // 4. A quantized wire's residuals (the merges', the synchronous steps'):
  // each new rank owes their mean, so the new ranks together owe what the
  // old ones did.
  const auto residual_mean = [&](const std::string& slash_name) {
    if (!c.has(ddap_replica_group(0) + slash_name)) return at::Tensor();
    at::Tensor owed = torch::zeros({n}, torch::kFloat32);
    for (int r = 0; r < count; ++r) owed += c.tensor(ddap_replica_group(r) + slash_name, n, torch::kFloat32);
    return owed / static_cast<double>(ranks);
  };
  d.residual = residual_mean("/ddap_residual");
  d.sync_residual = residual_mean("/ddap_sync_residual");
  return {adam_from_flat(mean, model, std::move(steps)), d};
}

}  // namespace hpctrain::reduce
