// collective_timeout_probe TIMEOUT_MS LATE_RANK: every rank enters an allreduce,
// except LATE_RANK, which arrives far past the timeout. The job must end with a
// message naming LATE_RANK instead of hanging.
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "comm/mpi_communicator.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    (void)std::fprintf(stderr, "usage: %s TIMEOUT_MS LATE_RANK\n", argv[0]);
    return 2;
  }
  const hpctrain::handles::MpiRuntime runtime;
  const std::chrono::milliseconds timeout(std::stol(argv[1]));
  hpctrain::comm::MpiCommunicator comm(MPI_COMM_WORLD, timeout);
  comm.barrier();
  if (comm.rank() == std::stoi(argv[2])) std::this_thread::sleep_for(timeout * 10);
  std::vector<float> data(1024, 1.0F);
  comm.allreduce(data.data(), data.size(), hpctrain::comm::DType::kFloat32, hpctrain::comm::ReduceOp::kSum);
  std::printf("rank %d: the allreduce completed, which it must not\n", comm.rank());
  return 0;
}
