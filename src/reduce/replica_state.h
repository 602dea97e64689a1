// One replica's training state in a checkpoint: the model's parameters under
// MODEL_GROUP/<parameter> and AdamW's state under
// OPTIMIZER_GROUP/{exp_avg,exp_avg_sq,step}/<parameter> (docs/checkpoints.md).
// DDP keeps its one replica at /model and /optimizer, DDAP each rank's under
// /replicas/rank-R/.
#pragma once

#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "model/language_model.h"
#include "optim/optimizer.h"

namespace hpctrain::reduce {

// DDAP's group for rank R's replica: replicas/rank-RRRRR.
std::string ddap_replica_group(int rank);

// Host copies, taken now (training may go on while the snapshot is written).
void save_replica(ckpt::Snapshot& snapshot, const std::string& model_group, const std::string& optimizer_group,
                  const model::LanguageModel& model, optim::AdamW& optimizer);
// Sharded checkpoints: parameters in registration order cut into `ranks` runs
// of about equal bytes; element i is the rank whose shard holds parameter i's
// weights and moments.
std::vector<int> shard_owners(const model::LanguageModel& model, int ranks);
// Per parameter, whether `rank`'s shard holds it.
std::vector<bool> owned_parameters(const model::LanguageModel& model, int rank, int ranks);
// save_replica's datasets for the parameters `rank` owns (shard_owners).
void save_replica_shard(ckpt::Snapshot& snapshot, const std::string& model_group, const std::string& optimizer_group,
                        const model::LanguageModel& model, optim::AdamW& optimizer, int rank, int ranks);
// Throws CheckpointError naming what is missing or has another shape.
void load_replica(const ckpt::CheckpointReader& checkpoint, const std::string& model_group,
                  const std::string& optimizer_group, model::LanguageModel& model, optim::AdamW& optimizer);

// Host copies of AdamW's state under GROUP/{exp_avg,exp_avg_sq,step}/<parameter>.
void add_adam_state(ckpt::Snapshot& snapshot, const std::string& group, const optim::AdamState& adam,
                    const model::LanguageModel& model);
// The same for a state nobody else holds (ZeRO-1's gathered copy): host
// tensors move into the snapshot instead of being copied once more.
void add_adam_state(ckpt::Snapshot& snapshot, const std::string& group, optim::AdamState&& adam,
                    const model::LanguageModel& model);
// AdamW's moments in the order DDAP keeps them flat (merges, checkpoints):
// every first moment, then every second; the tensors themselves, not copies.
std::vector<at::Tensor> moments_in_order(const optim::AdamState& adam);
// GROUP/{exp_avg,exp_avg_sq,step}/<parameter>; or, where the checkpoint
// holds them, the moments as pieces (kMomentPieces, ZeRO-1's sharded
// checkpoints), which must tile each parameter exactly.
optim::AdamState read_adam_state(const ckpt::CheckpointReader& checkpoint, const std::string& group,
                                 const model::LanguageModel& model);

// ZeRO-1's moments in a sharded checkpoint, as each rank holds them: a piece
// of a parameter's flattened moment per dataset,
// GROUP/pieces/{exp_avg,exp_avg_sq}/<parameter>/<first element, 12 digits>.
constexpr const char* kMomentPieces = "pieces";
std::string moment_piece_name(const std::string& group, const std::string& moment, const std::string& parameter,
                              std::int64_t first);

}  // namespace hpctrain::reduce
