#include "reduce/replica_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

namespace hpctrain::reduce {

std::string ddap_replica_group(int rank) { return fmt::format("replicas/rank-{:05}", rank); }

namespace {

// A host tensor the snapshot can own: `t` itself when it is one nobody else
// may change (`owned`), else a copy.
at::Tensor host(at::Tensor t, bool owned) {
  if (owned && t.is_cpu() && t.is_contiguous()) return t;
  return t.to(torch::kCPU).contiguous().clone();
}

void add_adam_tensors(ckpt::Snapshot& snapshot, const std::string& group, const optim::AdamState& adam,
                      const model::LanguageModel& model, bool owned) {
  std::size_t i = 0;
  for (const auto& item : model.named_parameters()) {
    snapshot.tensors.emplace_back(group + "/exp_avg/" + item.key(), host(adam.exp_avg[i], owned));
    snapshot.tensors.emplace_back(group + "/exp_avg_sq/" + item.key(), host(adam.exp_avg_sq[i], owned));
    snapshot.tensors.emplace_back(group + "/step/" + item.key(), torch::full({1}, adam.steps[i], torch::kInt64));
    ++i;
  }
}

}  // namespace

void add_adam_state(ckpt::Snapshot& snapshot, const std::string& group, const optim::AdamState& adam,
                    const model::LanguageModel& model) {
  add_adam_tensors(snapshot, group, adam, model, false);
}

void add_adam_state(ckpt::Snapshot& snapshot, const std::string& group, optim::AdamState&& adam,
                    const model::LanguageModel& model) {
  add_adam_tensors(snapshot, group, adam, model, true);
  adam = optim::AdamState();
}

std::vector<at::Tensor> moments_in_order(const optim::AdamState& adam) {
  std::vector<at::Tensor> all = adam.exp_avg;
  all.insert(all.end(), adam.exp_avg_sq.begin(), adam.exp_avg_sq.end());
  return all;
}

optim::AdamState read_adam_state(const ckpt::CheckpointReader& checkpoint, const std::string& group,
                                 const model::LanguageModel& model) {
  optim::AdamState adam;
  for (const auto& item : model.named_parameters()) {
    for (const char* part : {"exp_avg", "exp_avg_sq"}) {
      const std::string name = fmt::format("{}/{}/{}", group, part, item.key());
      const torch::Tensor t = checkpoint.tensor(name);
      if (t.sizes() != item.value().sizes() || t.scalar_type() != torch::kFloat32) {
        throw ckpt::CheckpointError(fmt::format("{}: {} has shape {}, the parameter {}", checkpoint.name(), name,
                                                fmt::join(t.sizes().vec(), "x"),
                                                fmt::join(item.value().sizes().vec(), "x")));
      }
      (std::string(part) == "exp_avg" ? adam.exp_avg : adam.exp_avg_sq).push_back(t);
    }
    adam.steps.push_back(checkpoint.tensor(group + "/step/" + item.key(), 1, torch::kInt64).item<std::int64_t>());
  }
  return adam;
}

void save_replica(ckpt::Snapshot& snapshot, const std::string& model_group, const std::string& optimizer_group,
                  const model::LanguageModel& model, optim::AdamW& optimizer) {
  ckpt::add_parameters(snapshot, model_group, model);
  add_adam_state(snapshot, optimizer_group, optim::adam_state(optimizer, model), model);
}

void load_replica(const ckpt::CheckpointReader& checkpoint, const std::string& model_group,
                  const std::string& optimizer_group, model::LanguageModel& model, optim::AdamW& optimizer) {
  ckpt::load_parameters(checkpoint.file(), model_group, model);
  optim::restore_adam_state(optimizer, model, read_adam_state(checkpoint, optimizer_group, model));
}

}  // namespace hpctrain::reduce
