// Which GPU a rank drives, one rank per GPU. When the ranks of a node share
// one view of its GPUs, local rank i takes visible device i; when each sees
// its own (srun --gpus-per-task, or a launcher that sets CUDA_VISIBLE_DEVICES
// per task), every rank takes the first device of its own view. Two ranks on
// one device would run, slowly, until NCCL refused the communicator
// ("Duplicate GPU detected"), so a shared view with fewer GPUs than ranks is
// refused before anything is built, naming the node.
#pragma once

#include <string>
#include <vector>

namespace hpctrain::cluster {

struct GpuPlacement {
  std::string host;                  // this rank's node, for the message
  int local_rank = 0;                // among the ranks on this node
  int local_size = 1;                // ranks on this node
  std::string cuda_visible_devices;  // as this rank saw it; empty when unset
  // Every rank on this node has a CUDA_VISIBLE_DEVICES of its own, no two alike.
  bool own_devices = false;
};

// The device index for this rank, given how many GPUs it sees. Throws
// ClusterError when there is no GPU, or when the node's ranks share a view
// with fewer GPUs than ranks.
int gpu_for_local_rank(const GpuPlacement& placement, int visible_gpus);

// Whether each rank on `host` has a CUDA_VISIBLE_DEVICES of its own: `hosts`
// and `visible` hold every rank's node and value, in rank order.
bool devices_bound_per_rank(const std::vector<std::string>& hosts, const std::vector<std::string>& visible,
                            const std::string& host);

}  // namespace hpctrain::cluster
