// `hpctrain doctor`: bootstraps exactly as training would, prints what was
// resolved (ranks, hosts, head node, interface, backend, threads, BLAS), then
// measures allreduce bandwidth over MPI and, with --nccl, over NCCL.
#pragma once

#include <chrono>
#include <cstddef>

#include "comm/world.h"

namespace hpctrain::cli {

struct DoctorOptions {
  std::chrono::milliseconds collective_timeout{std::chrono::minutes(5)};
  comm::WaitStrategy wait = comm::kDefaultWaitStrategy;  // as training's
  std::size_t min_bytes = std::size_t{4} << 10;
  std::size_t max_bytes = std::size_t{64} << 20;
  bool bandwidth = true;
  // Also build the NCCL communicator as training on GPUs would, print each
  // rank's GPU and the libraries, and measure allreduce over NCCL.
  bool nccl = false;
};

void run_doctor(const DoctorOptions& options);

}  // namespace hpctrain::cli
