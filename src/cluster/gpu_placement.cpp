#include "cluster/gpu_placement.h"

#include <fmt/format.h>

#include "cluster/error.h"

namespace hpctrain::cluster {

int gpu_for_local_rank(const GpuPlacement& placement, int visible_gpus, const std::string& cuda_visible_devices) {
  const std::string through =
      cuda_visible_devices.empty() ? std::string() : fmt::format(" (CUDA_VISIBLE_DEVICES={})", cuda_visible_devices);
  if (visible_gpus <= 0) throw ClusterError(fmt::format("node {} has no visible GPU{}", placement.host, through));
  if (placement.local_size > visible_gpus) {
    throw ClusterError(fmt::format(
        "node {} runs {} ranks but has {} visible GPU{}{}: each rank needs a GPU of its own (two on one device "
        "fail in NCCL); start at most {} task{} per node (srun --ntasks-per-node={} or --gpus-per-task=1)",
        placement.host, placement.local_size, visible_gpus, visible_gpus == 1 ? "" : "s", through, visible_gpus,
        visible_gpus == 1 ? "" : "s", visible_gpus));
  }
  return placement.local_rank;
}

}  // namespace hpctrain::cluster
