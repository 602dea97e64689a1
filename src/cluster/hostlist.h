// SLURM hostlist expressions ("node[01-03,7],gpu-a[1-2]"), expanded and compressed
// exactly as Slurm 22.05's hostlist.c does. Where scontrol rejects an expression we
// throw; we never guess.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hpctrain::cluster {

// Hosts in expression order, duplicates kept (as `scontrol show hostnames`).
std::vector<std::string> expand_hostlist(std::string_view expression);

// The ranged form of `hosts` in their given order (as `scontrol show hostlist`).
std::string compress_hostlist(const std::vector<std::string>& hosts);

}  // namespace hpctrain::cluster
