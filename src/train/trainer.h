// The training run: `hpctrain train EXP.toml` (or `hpctrain EXP.toml`).
#pragma once

#include <string>

#include "cluster/environment.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "train/evaluate.h"

namespace hpctrain::train {

struct TrainSummary {
  std::string weights_sha256;  // identical for identical (seed, world size, config)
  EvalResult final_eval;
  double tokens_per_second = 0;  // all ranks
  std::int64_t steps = 0;
  bool stopped_early = false;  // preempted, or training.stop_after
  bool preempted = false;      // by checkpoint.signal: exit with config::kRequeueExitCode
};

// Throws on bad configuration (naming the fields) and on data errors.
TrainSummary run_training(const config::Experiment& experiment, comm::World& world, const cluster::Environment& env);

}  // namespace hpctrain::train
