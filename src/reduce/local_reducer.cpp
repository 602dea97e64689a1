#include "reduce/local_reducer.h"

#include <fmt/format.h>

#include "reduce/replica_state.h"

namespace hpctrain::reduce {

void LocalReducer::begin_step() {
  for (auto& p : model_.parameters()) p.mutable_grad().reset();
}

void LocalReducer::save(ckpt::Snapshot& snapshot) { save_replica(snapshot, "model", "optimizer", model_, optimizer_); }

void LocalReducer::load(const ckpt::CheckpointReader& checkpoint) {
  load_replica(checkpoint, "model", "optimizer", model_, optimizer_);
}

std::vector<std::string> LocalReducer::incompatibilities(const ckpt_file::CheckpointInfo& info) const {
  if (info.reducer == "ddp") return {};
  return {fmt::format("parallel.reducer: checkpoint {} vs run ddp", info.reducer)};
}

}  // namespace hpctrain::reduce
