#include "reduce/replica_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

namespace hpctrain::reduce {

std::string ddap_replica_group(int rank) { return fmt::format("replicas/rank-{:05}", rank); }

void add_adam_state(ckpt::Snapshot& snapshot, const std::string& group, const optim::AdamState& adam,
                    const model::LanguageModel& model) {
  std::size_t i = 0;
  for (const auto& item : model.named_parameters()) {
    snapshot.tensors.emplace_back(group + "/exp_avg/" + item.key(),
                                  adam.exp_avg[i].to(torch::kCPU).contiguous().clone());
    snapshot.tensors.emplace_back(group + "/exp_avg_sq/" + item.key(),
                                  adam.exp_avg_sq[i].to(torch::kCPU).contiguous().clone());
    snapshot.tensors.emplace_back(group + "/step/" + item.key(), torch::full({1}, adam.steps[i], torch::kInt64));
    ++i;
  }
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
