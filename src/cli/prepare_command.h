// `hpctrain prepare EXP.toml`: prepares the experiment's data set ([data]) and
// prints its statistics.
#pragma once

#include <string>
#include <vector>

namespace hpctrain::cli {

void run_prepare(const std::string& experiment_file, const std::vector<std::string>& overrides);

}  // namespace hpctrain::cli
