#include "train/train_state.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <mutex>

#include "train/optimizer.h"

namespace hpctrain::train {
namespace {

std::string replica_group(int rank) { return fmt::format("replicas/rank-{:05}", rank); }

void add_adam_state(ckpt::Snapshot& s, const std::string& group, const AdamState& adam,
                    const model::LanguageModel& model) {
  std::size_t i = 0;
  for (const auto& item : model.named_parameters()) {
    s.tensors.emplace_back(group + "/exp_avg/" + item.key(), adam.exp_avg[i].to(torch::kCPU).contiguous().clone());
    s.tensors.emplace_back(group + "/exp_avg_sq/" + item.key(),
                           adam.exp_avg_sq[i].to(torch::kCPU).contiguous().clone());
    s.tensors.emplace_back(group + "/step/" + item.key(), torch::full({1}, adam.steps[i], torch::kInt64));
    ++i;
  }
}

AdamState read_adam_state(const ckpt::Hdf5Reader& file, const std::string& group, const model::LanguageModel& model) {
  AdamState adam;
  for (const auto& item : model.named_parameters()) {
    for (const char* part : {"exp_avg", "exp_avg_sq"}) {
      const std::string name = fmt::format("{}/{}/{}", group, part, item.key());
      const torch::Tensor t = file.tensor(name);
      if (t.sizes() != item.value().sizes()) {
        throw ckpt::CheckpointError(fmt::format("{}: {} has shape {}, the parameter {}", file.name(), name,
                                                fmt::join(t.sizes().vec(), "x"),
                                                fmt::join(item.value().sizes().vec(), "x")));
      }
      (std::string(part) == "exp_avg" ? adam.exp_avg : adam.exp_avg_sq).push_back(t);
    }
    adam.steps.push_back(file.tensor(group + "/step/" + item.key()).item<std::int64_t>());
  }
  return adam;
}

torch::Tensor flat(const std::vector<at::Tensor>& tensors) {
  std::vector<torch::Tensor> parts;
  parts.reserve(tensors.size());
  for (const auto& t : tensors) parts.push_back(t.detach().to(torch::kCPU, torch::kFloat32).reshape(-1));
  return torch::cat(parts);
}

// Splits a flat vector into GROUP/<parameter name> entries shaped like the model.
void add_unflattened(ckpt::Snapshot& s, const std::string& group, const torch::Tensor& flat_values,
                     const model::LanguageModel& model) {
  std::int64_t offset = 0;
  for (const auto& item : model.named_parameters()) {
    const std::int64_t n = item.value().numel();
    s.tensors.emplace_back(group + "/" + item.key(),
                           flat_values.narrow(0, offset, n).reshape(item.value().sizes()).clone());
    offset += n;
  }
}

at::Generator cpu_generator() { return at::detail::getDefaultCPUGenerator(); }

// The stored config's keys that must match for the checkpoint to continue this run.
std::vector<std::string> incompatibilities(const config::Experiment& now, const config::Experiment& then,
                                           const ckpt::CheckpointInfo& info, const std::string& tokenizer_sha256,
                                           int world_size) {
  std::vector<std::string> diff;
  auto compare = [&diff](const std::string& key, const auto& was, const auto& is) {
    if (was != is) diff.push_back(fmt::format("{}: checkpoint {} vs run {}", key, was, is));
  };
  compare("model.kind", then.model.kind, now.model.kind);
  compare("model.n_layer", then.model.n_layer, now.model.n_layer);
  compare("model.n_head", then.model.n_head, now.model.n_head);
  compare("model.d_model", then.model.d_model, now.model.d_model);
  compare("data.seq_len", then.data.seq_len, now.data.seq_len);
  compare("training.batch_size", then.training.batch_size, now.training.batch_size);
  compare("parallel.reducer", info.reducer, now.parallel.reducer);
  if (!info.tokenizer_sha256.empty() && info.tokenizer_sha256 != tokenizer_sha256) {
    diff.push_back(fmt::format("tokenizer sha256: checkpoint {} vs run {}", info.tokenizer_sha256, tokenizer_sha256));
  }
  // DDAP replicas belong to ranks; DDP's single replica continues at any world size.
  if (info.reducer == "ddap" && info.world_size != world_size) {
    diff.push_back(fmt::format("world size: checkpoint {} DDAP replicas vs run {} ranks", info.world_size, world_size));
  }
  return diff;
}

}  // namespace

ckpt::Snapshot capture_training_state(TrainingParts& parts, const LoopPosition& position) {
  const int rank = parts.comm.rank();
  const int world = parts.comm.size();
  ckpt::Snapshot s;
  s.info = {position.step,
            world,
            parts.experiment.parallel.reducer,
            parts.experiment.resolved_toml,
            parts.tokenizer_sha256,
            {},
            {}};
  s.ints = {{"epoch", static_cast<std::int64_t>(position.sampler.epoch)},
            {"sampler_step", static_cast<std::int64_t>(position.sampler.step)},
            {"log_window_steps", position.window_steps}};
  s.reals = {{"log_window_loss", position.window_loss}, {"lr", position.lr}};
  const AdamState adam = adam_state(parts.optimizer, parts.model);

  if (parts.ddap == nullptr) {
    // DDP replicas are identical: rank 0's state is everyone's.
    if (rank != 0) return {};
    ckpt::add_parameters(s, "model", parts.model);
    add_adam_state(s, "optimizer", adam, parts.model);
  } else {
    const reduce::DdapState d = parts.ddap->state();
    // Each rank's replica, moments and (with a merge in flight) θ at its start,
    // broadcast from each rank in turn and kept by rank 0.
    std::vector<at::Tensor> mine_parts = {flat(parts.model.parameters()), flat(adam.exp_avg), flat(adam.exp_avg_sq)};
    if (d.started_at >= 0) mine_parts.push_back(d.theta_at_start.to(torch::kCPU));
    if (d.moments_at_start.defined()) mine_parts.push_back(d.moments_at_start.to(torch::kCPU));
    const torch::Tensor mine = torch::cat(mine_parts);
    const torch::Tensor my_steps = torch::tensor(adam.steps, torch::kInt64);
    const std::int64_t n = parts.model.parameter_count();
    for (int r = 0; r < world; ++r) {
      torch::Tensor values = r == rank ? mine.clone() : torch::empty_like(mine);
      torch::Tensor steps = r == rank ? my_steps.clone() : torch::empty_like(my_steps);
      parts.comm.broadcast(values.data_ptr(), static_cast<std::size_t>(values.numel()), comm::DType::kFloat32, r);
      parts.comm.broadcast(steps.data_ptr(), static_cast<std::size_t>(steps.numel()), comm::DType::kInt64, r);
      if (rank != 0) continue;
      const std::string group = replica_group(r);
      add_unflattened(s, group + "/model", values.narrow(0, 0, n), parts.model);
      add_unflattened(s, group + "/optimizer/exp_avg", values.narrow(0, n, n), parts.model);
      add_unflattened(s, group + "/optimizer/exp_avg_sq", values.narrow(0, 2 * n, n), parts.model);
      std::size_t i = 0;
      for (const auto& item : parts.model.named_parameters()) {
        s.tensors.emplace_back(group + "/optimizer/step/" + item.key(),
                               steps.narrow(0, static_cast<std::int64_t>(i), 1).clone());
        ++i;
      }
      if (d.started_at >= 0) s.tensors.emplace_back(group + "/ddap_theta_at_start", values.narrow(0, 3 * n, n).clone());
      if (d.moments_at_start.defined()) {
        s.tensors.emplace_back(group + "/ddap_moments_at_start", values.narrow(0, 4 * n, 2 * n).clone());
      }
    }
    if (rank != 0) return {};
    add_unflattened(s, "model", d.anchor.to(torch::kCPU), parts.model);
    s.tensors.emplace_back("ddap/anchor", d.anchor.to(torch::kCPU).clone());
    if (d.momentum.defined()) s.tensors.emplace_back("ddap/momentum", d.momentum.to(torch::kCPU).clone());
    if (d.started_at >= 0) s.tensors.emplace_back("ddap/merged", d.merged.to(torch::kCPU).clone());
    if (d.merged_moments.defined()) {
      s.tensors.emplace_back("ddap/merged_moments", d.merged_moments.to(torch::kCPU).clone());
    }
    s.ints.insert(s.ints.end(), {{"ddap_merges", d.merges},
                                 {"ddap_last_step", d.last_step},
                                 {"ddap_last_merge_applied_for", d.last_merge_applied_for},
                                 {"ddap_started_at", d.started_at}});
  }
  {
    at::Generator generator = cpu_generator();
    const std::lock_guard lock(generator.mutex());
    s.tensors.emplace_back("rng/torch_cpu", generator.get_state().clone());
  }
  return s;
}

LoopPosition restore_training_state(const std::filesystem::path& path, TrainingParts& parts) {
  const ckpt::Hdf5Reader file(path);
  const ckpt::CheckpointInfo info = ckpt::read_checkpoint_info(file);
  const config::Experiment then = config::load_experiment_text(info.config_toml, file.name() + " (stored config)");
  const auto diff = incompatibilities(parts.experiment, then, info, parts.tokenizer_sha256, parts.comm.size());
  if (!diff.empty()) {
    throw ckpt::CheckpointError(fmt::format("{} cannot continue this run ({} difference{}): {}", file.name(),
                                            diff.size(), diff.size() == 1 ? "" : "s", fmt::join(diff, "; ")));
  }
  const int rank = parts.comm.rank();
  LoopPosition position;
  position.step = info.step;
  position.sampler = {static_cast<std::uint64_t>(file.int_attribute("epoch")),
                      static_cast<std::uint64_t>(file.int_attribute("sampler_step"))};
  position.window_steps = file.int_attribute("log_window_steps");
  position.window_loss = file.real_attribute("log_window_loss");
  position.lr = file.real_attribute("lr");

  const auto device = parts.model.parameters().front().device();
  if (parts.ddap == nullptr) {
    ckpt::load_parameters(file, "model", parts.model);
    restore_adam_state(parts.optimizer, parts.model, read_adam_state(file, "optimizer", parts.model));
  } else {
    const std::string group = replica_group(rank);
    ckpt::load_parameters(file, group + "/model", parts.model);
    restore_adam_state(parts.optimizer, parts.model, read_adam_state(file, group + "/optimizer", parts.model));
    reduce::DdapState d;
    d.anchor = file.tensor("ddap/anchor").to(device);
    if (file.has("ddap/momentum")) d.momentum = file.tensor("ddap/momentum").to(device);
    d.merges = file.int_attribute("ddap_merges");
    d.last_step = file.int_attribute("ddap_last_step");
    d.last_merge_applied_for = file.int_attribute("ddap_last_merge_applied_for");
    d.started_at = file.int_attribute("ddap_started_at");
    if (d.started_at >= 0) {
      d.theta_at_start = file.tensor(group + "/ddap_theta_at_start").to(device);
      d.merged = file.tensor("ddap/merged").to(device);
      if (file.has("ddap/merged_moments")) {
        d.moments_at_start = file.tensor(group + "/ddap_moments_at_start").to(device);
        d.merged_moments = file.tensor("ddap/merged_moments").to(device);
      }
    }
    parts.ddap->restore(d);
  }
  parts.sampler.restore(position.sampler);
  at::Generator generator = cpu_generator();
  const std::lock_guard lock(generator.mutex());
  generator.set_state(file.tensor("rng/torch_cpu"));
  return position;
}

}  // namespace hpctrain::train
