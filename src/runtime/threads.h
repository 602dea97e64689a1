// Compute threads per rank. One rank per core is the fast default on a node
// (docs/training.md); each rank gets its share of the cores, and LibTorch's
// intra-op pool and OpenBLAS are set to the same number so ranks never
// oversubscribe the node. torch::set_num_threads alone does not reach OpenBLAS.
#pragma once

#include <string>

#include "cluster/environment.h"

namespace hpctrain::runtime {

struct ThreadPlan {
  int threads = 1;
  std::string source;  // why this number, for the log
};

// SLURM_CPUS_PER_TASK when set, else the cores this process may run on divided
// by the ranks on this node (at least 1).
ThreadPlan plan_threads(const cluster::Environment& env, int ranks_on_node);

// Applies `threads` to LibTorch and OpenBLAS.
void apply_threads(int threads);

// LibTorch's intra-op thread count as it stands.
int torch_threads();

}  // namespace hpctrain::runtime
