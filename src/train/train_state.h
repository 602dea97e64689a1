// Everything a run needs to continue bit-exactly, to and from a checkpoint
// (layout in docs/checkpoints.md):
//   /model/<p>                       the weights (DDAP: the anchor, the merged model)
//   /optimizer/{exp_avg,exp_avg_sq,step}/<p>   AdamW's state (DDP)
//   /rng/torch_cpu                   LibTorch's CPU generator
//   /ddap/{anchor,momentum,merged}   DDAP's shared state
//   /replicas/rank-R/...             DDAP: each rank's own replica, AdamW state
//                                    and, with a merge in flight, θ at its start
//   root attributes                  step, sampler position, logging window, lr,
//                                    DDAP counters, and the provenance of ckpt::CheckpointInfo
// The learning-rate schedule is a pure function of the step and the stored
// config, so the step is its whole state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "ckpt/checkpoint.h"
#include "comm/communicator.h"
#include "config/experiment.h"
#include "data/sampler.h"
#include "model/language_model.h"
#include "reduce/ddap_reducer.h"

namespace torch::optim {
class AdamW;
}

namespace hpctrain::train {

// Where the training loop stands.
struct LoopPosition {
  std::int64_t step = 0;  // optimizer steps done
  data::SamplerState sampler;
  double window_loss = 0;  // the logging window in progress
  std::int64_t window_steps = 0;
  double lr = 0;  // recorded for readers; recomputed from the step on resume
};

// The trainer's live objects that a checkpoint captures and restores.
struct TrainingParts {
  const config::Experiment& experiment;
  model::LanguageModel& model;
  torch::optim::AdamW& optimizer;
  data::DistributedSampler& sampler;
  reduce::DdapReducer* ddap;  // null under DDP
  comm::Communicator& comm;   // CPU, every rank: gathers DDAP replicas
  std::string tokenizer_sha256;
};

// Collective under DDAP (every rank's replica goes to rank 0). Rank 0 gets the
// full Snapshot, every other rank an empty one.
ckpt::Snapshot capture_training_state(TrainingParts& parts, const LoopPosition& position);

// Every rank reads `path` and restores the model, optimizer, sampler, RNG and
// reducer; returns the loop position. Throws ckpt::CheckpointError listing
// every way the checkpoint does not fit this run.
LoopPosition restore_training_state(const std::filesystem::path& path, TrainingParts& parts);

}  // namespace hpctrain::train
