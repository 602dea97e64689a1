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
optim::AdamState read_adam_state(const ckpt::CheckpointReader& checkpoint, const std::string& group,
                                 const model::LanguageModel& model);

}  // namespace hpctrain::reduce
