#include "cli/prepare_command.h"

#include <cstdio>

#include "config/experiment.h"
#include "data/prepare.h"
#include "train/preemption.h"

namespace hpctrain::cli {

void run_prepare(const std::string& experiment_file, const std::vector<std::string>& overrides) {
  const auto experiment = config::load_experiment(experiment_file, overrides);
  train::exit_on_preemption_signals(experiment.checkpoint.signal);
  const auto result = data::prepare(experiment, stdout);
  data::print_stats(result, stdout);
}

}  // namespace hpctrain::cli
