#include "cluster/gpu_placement.h"

#include <fmt/format.h>

#include <set>

#include "cluster/error.h"

namespace hpctrain::cluster {

int gpu_for_local_rank(const GpuPlacement& placement, int visible_gpus) {
  const std::string through = placement.cuda_visible_devices.empty()
                                  ? std::string()
                                  : fmt::format(" (CUDA_VISIBLE_DEVICES={})", placement.cuda_visible_devices);
  if (visible_gpus <= 0) throw ClusterError(fmt::format("node {} has no visible GPU{}", placement.host, through));
  if (placement.own_devices) return 0;
  if (placement.local_size > visible_gpus) {
    throw ClusterError(fmt::format(
        "node {} runs {} ranks but its ranks share {} visible GPU{}{}: each rank needs a GPU of its own (two on "
        "one device fail in NCCL); start at most {} task{} per node, or give each task its own GPU "
        "(srun --gpus-per-task=1)",
        placement.host, placement.local_size, visible_gpus, visible_gpus == 1 ? "" : "s", through, visible_gpus,
        visible_gpus == 1 ? "" : "s"));
  }
  return placement.local_rank;
}

bool devices_bound_per_rank(const std::vector<std::string>& hosts, const std::vector<std::string>& visible,
                            const std::string& host) {
  std::set<std::string> seen;
  for (std::size_t r = 0; r < hosts.size() && r < visible.size(); ++r) {
    if (hosts[r] != host) continue;
    if (visible[r].empty() || !seen.insert(visible[r]).second) return false;
  }
  return true;
}

}  // namespace hpctrain::cluster
