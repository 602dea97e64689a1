// The experiment file's schema: one struct per TOML section, each in its own
// header (config/*_config.h) with its defaults and the read() that checks it
// (docs/config.md lists every key). Values resolve CLI `--set` over file over
// default; the resolved TOML is kept so a run can record exactly what it used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/checkpoint_config.h"
#include "config/data_config.h"
#include "config/eval_config.h"
#include "config/job_config.h"
#include "config/logging_config.h"
#include "config/model_config.h"
#include "config/optimizer_config.h"
#include "config/parallel_config.h"
#include "config/schedule_config.h"
#include "config/training_config.h"

namespace hpctrain::config {

struct Experiment {
  std::string path;  // the experiment file
  JobConfig job;
  DataConfig data;
  ModelConfig model;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  TrainingConfig training;
  EvalConfig eval;
  LoggingConfig logging;
  ParallelConfig parallel;
  CheckpointConfig checkpoint;
  std::string resolved_toml;  // every key, after overrides and defaults
};

// Throws ConfigError with file:line:column (or the offending --set) on a TOML
// syntax error, an unknown section or key, a wrong type or an out-of-range value.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides = {});

// The same from TOML text (a checkpoint's stored config); `origin` names it in errors.
Experiment load_experiment_text(const std::string& text, const std::string& origin,
                                const std::vector<std::string>& overrides = {});

}  // namespace hpctrain::config
