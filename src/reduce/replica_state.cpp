#include "reduce/replica_state.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/types.h>

#include <algorithm>

namespace hpctrain::reduce {

std::string ddap_replica_group(int rank) { return fmt::format("replicas/rank-{:05}", rank); }

namespace {

// A host tensor the snapshot can own: `t` itself when it is one nobody else
// may change (`owned`), else a copy.
at::Tensor host(at::Tensor t, bool owned) {
  if (owned && t.is_cpu() && t.is_contiguous()) return t;
  return t.to(torch::kCPU).contiguous().clone();
}

// `only`: the parameters to add (empty: all).
void add_adam_tensors(ckpt::Snapshot& snapshot, const std::string& group, const optim::AdamState& adam,
                      const model::LanguageModel& model, bool owned, const std::vector<bool>& only = {}) {
  std::size_t i = 0;
  for (const auto& item : model.named_parameters()) {
    if (!only.empty() && !only[i]) {
      ++i;
      continue;
    }
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

std::string moment_piece_name(const std::string& group, const std::string& moment, const std::string& parameter,
                              std::int64_t first) {
  return fmt::format("{}/{}/{}/{}/{:012}", group, kMomentPieces, moment, parameter, first);
}

namespace {

// A parameter's moment from its pieces: each a float32 vector, in order of
// their first element, covering the parameter's elements exactly once.
torch::Tensor assemble_pieces(const ckpt::CheckpointReader& checkpoint, const std::string& group,
                              const std::string& moment, const std::string& parameter, const torch::Tensor& like) {
  const std::string dir = fmt::format("{}/{}/{}/{}", group, kMomentPieces, moment, parameter);
  torch::Tensor whole = torch::empty({like.numel()}, torch::kFloat32);
  std::int64_t covered = 0;
  for (const auto& member : checkpoint.file().members(dir)) {  // sorted: 12 digits each
    const std::string name = fmt::format("{}/{}", dir, member);
    const bool digits =
        member.size() == 12 && std::all_of(member.begin(), member.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoll(member) != covered) {
      throw ckpt::CheckpointError(
          fmt::format("{}: {} does not continue the pieces before it at element {}", checkpoint.name(), name, covered));
    }
    const torch::Tensor piece = checkpoint.tensor(name);
    if (piece.dim() != 1 || piece.scalar_type() != torch::kFloat32 || piece.numel() > like.numel() - covered) {
      throw ckpt::CheckpointError(fmt::format("{}: {} is no float32 piece within the parameter's {} elements",
                                              checkpoint.name(), name, like.numel()));
    }
    whole.narrow(0, covered, piece.numel()).copy_(piece);
    covered += piece.numel();
  }
  if (covered != like.numel()) {
    throw ckpt::CheckpointError(
        fmt::format("{}: the pieces of {} cover {} of its {} elements", checkpoint.name(), dir, covered, like.numel()));
  }
  return whole.reshape(like.sizes());
}

}  // namespace

optim::AdamState read_adam_state(const ckpt::CheckpointReader& checkpoint, const std::string& group,
                                 const model::LanguageModel& model) {
  optim::AdamState adam;
  const bool pieces = checkpoint.file().has_group(group + "/" + kMomentPieces);
  for (const auto& item : model.named_parameters()) {
    for (const char* part : {"exp_avg", "exp_avg_sq"}) {
      const std::string name = fmt::format("{}/{}/{}", group, part, item.key());
      const torch::Tensor t =
          pieces ? assemble_pieces(checkpoint, group, part, item.key(), item.value()) : checkpoint.tensor(name);
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
  // adam_state() hands out the optimizer's live moments, which the next step
  // changes in place: copied (the lvalue overload), never moved in.
  const optim::AdamState live = optim::adam_state(optimizer, model);
  add_adam_state(snapshot, optimizer_group, live, model);
}

std::vector<int> shard_owners(const model::LanguageModel& model, int ranks) {
  std::int64_t total = 0;
  for (const auto& p : model.parameters()) total += p.numel();
  std::vector<int> owners;
  std::int64_t offset = 0;
  for (const auto& p : model.parameters()) {
    // The rank whose equal share of the elements holds the parameter's middle.
    const std::int64_t middle = offset + p.numel() / 2;
    owners.push_back(
        static_cast<int>(std::min<std::int64_t>(ranks - 1, middle * ranks / std::max<std::int64_t>(total, 1))));
    offset += p.numel();
  }
  return owners;
}

std::vector<bool> owned_parameters(const model::LanguageModel& model, int rank, int ranks) {
  std::vector<bool> mine;
  for (const int owner : shard_owners(model, ranks)) mine.push_back(owner == rank);
  return mine;
}

void save_replica_shard(ckpt::Snapshot& snapshot, const std::string& model_group, const std::string& optimizer_group,
                        const model::LanguageModel& model, optim::AdamW& optimizer, int rank, int ranks) {
  const std::vector<bool> mine = owned_parameters(model, rank, ranks);
  ckpt::add_parameters(snapshot, model_group, model, mine);
  add_adam_tensors(snapshot, optimizer_group, optim::adam_state(optimizer, model), model, false, mine);
}

void load_replica(const ckpt::CheckpointReader& checkpoint, const std::string& model_group,
                  const std::string& optimizer_group, model::LanguageModel& model, optim::AdamW& optimizer) {
  ckpt::load_parameters(checkpoint.file(), model_group, model);
  optim::restore_adam_state(optimizer, model, read_adam_state(checkpoint, optimizer_group, model));
}

}  // namespace hpctrain::reduce
