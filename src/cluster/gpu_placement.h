// Which GPU a rank drives: local rank i takes visible device i, one rank per
// GPU. Two ranks on one device would run, slowly, until NCCL refused the
// communicator ("Duplicate GPU detected"), so more ranks on a node than
// visible GPUs is refused before anything is built, naming the node.
#pragma once

#include <string>

namespace hpctrain::cluster {

struct GpuPlacement {
  std::string host;    // this rank's node, for the message
  int local_rank = 0;  // among the ranks on this node
  int local_size = 1;  // ranks on this node
};

// The device index for this rank, given how many GPUs it sees and the
// CUDA_VISIBLE_DEVICES it saw them through (empty when unset). Throws
// ClusterError when there is no GPU or fewer GPUs than ranks on the node.
int gpu_for_local_rank(const GpuPlacement& placement, int visible_gpus, const std::string& cuda_visible_devices);

}  // namespace hpctrain::cluster
