#include "reduce/ddap_reshard.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "reduce/flat_parameters.h"
#include "reduce/replica_state.h"

namespace hpctrain::reduce {
namespace {

// AdamW's moments as one flat vector: every first moment, then every second
// (the order DDAP's merges keep).
at::Tensor flat_moments(const optim::AdamState& adam) {
  std::vector<at::Tensor> all = adam.exp_avg;
  all.insert(all.end(), adam.exp_avg_sq.begin(), adam.exp_avg_sq.end());
  return flatten(all);
}

optim::AdamState adam_from_flat(const at::Tensor& moments, const model::LanguageModel& model,
                                std::vector<std::int64_t> steps) {
  optim::AdamState adam;
  for (const auto& p : model.parameters()) adam.exp_avg.push_back(torch::zeros_like(p, torch::kCPU));
  for (const auto& p : model.parameters()) adam.exp_avg_sq.push_back(torch::zeros_like(p, torch::kCPU));
  std::vector<at::Tensor> all = adam.exp_avg;
  all.insert(all.end(), adam.exp_avg_sq.begin(), adam.exp_avg_sq.end());
  unflatten_into(moments, all);
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

  std::vector<at::Tensor> theta;
  std::vector<at::Tensor> moments;
  std::vector<std::int64_t> steps;
  for (int r = 0; r < static_cast<int>(ranks); ++r) {
    const std::string group = ddap_replica_group(r);
    theta.push_back(ckpt::read_flat_parameters(c, group + "/model", model));
    const optim::AdamState adam = read_adam_state(c, group + "/optimizer", model);
    moments.push_back(flat_moments(adam));
    if (r == 0) {
      steps = adam.steps;
    } else if (adam.steps != steps) {
      throw ckpt::CheckpointError(
          fmt::format("{}: {} has taken other optimizer step counts than rank 0's replica", c.name(), group));
    }
  }

  if (started_at >= 0) {  // 1. the merge in flight
    const at::Tensor next = next_anchor(d.anchor, c.tensor("ddap/merged", n, torch::kFloat32), rule, d.momentum);
    const bool with_moments = c.has("ddap/merged_moments");
    const at::Tensor merged_moments =
        with_moments ? c.tensor("ddap/merged_moments", 2 * n, torch::kFloat32) : at::Tensor();
    for (int r = 0; r < static_cast<int>(ranks); ++r) {
      const std::string group = ddap_replica_group(r);
      auto& t = theta[static_cast<std::size_t>(r)];
      t = next + (t - c.tensor(group + "/ddap_theta_at_start", n, torch::kFloat32));
      if (with_moments) {
        auto& m = moments[static_cast<std::size_t>(r)];
        m = merged_moments + (m - c.tensor(group + "/ddap_moments_at_start", 2 * n, torch::kFloat32));
        m.narrow(0, n, n).clamp_min_(0);
      }
    }
    d.anchor = next;
    d.last_merge_applied_for = started_at;
    ++d.merges;
  }

  bool diverged = false;  // 2. a merge of the replicas
  for (const auto& t : theta) diverged = diverged || !t.equal(d.anchor);
  if (diverged) {
    std::vector<at::Tensor> deltas;
    deltas.reserve(theta.size());
    for (const auto& t : theta) deltas.push_back(t - d.anchor);
    d.anchor = next_anchor(d.anchor, merged_delta(deltas, rule), rule, d.momentum);
    d.last_merge_applied_for = d.last_step;
    ++d.merges;
  }

  at::Tensor mean = torch::zeros_like(moments.front());  // 3. the moments' mean
  for (const auto& m : moments) mean += m;
  mean /= static_cast<double>(ranks);
  return {d.anchor.clone(), adam_from_flat(mean, model, std::move(steps)), d};
}

}  // namespace hpctrain::reduce
