// SLURM's compressed per-node task counts, e.g. SLURM_TASKS_PER_NODE="2(x3),1".
#pragma once

#include <string_view>
#include <vector>

namespace hpctrain::cluster {

// "2(x3),1" -> {2, 2, 2, 1}. `variable` names the source in error messages.
std::vector<int> parse_tasks_per_node(std::string_view value, std::string_view variable);

}  // namespace hpctrain::cluster
