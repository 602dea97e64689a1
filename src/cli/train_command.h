// `hpctrain train EXP.toml` (also plain `hpctrain EXP.toml`): bootstraps the
// world as doctor does, then trains.
#pragma once

#include <string>
#include <vector>

namespace hpctrain::cli {

// Returns the exit status: 0, or config::kRequeueExitCode after a preemption checkpoint.
int run_train(const std::string& experiment_file, const std::vector<std::string>& overrides);

}  // namespace hpctrain::cli
