// collective_timeout_probe TIMEOUT_MS LATE_RANK [late|silent]: every rank enters
// an allreduce except LATE_RANK, which
//  - late: arrives far past the timeout;
//  - silent: enters the collective and then freezes inside it, neither
//    progressing nor polling, as a rank killed mid-collective looks to the others
//    (the roll call is driven directly, since a real allreduce may complete
//    without the frozen rank's further help).
// The job must end with a message naming LATE_RANK instead of hanging.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "comm/mpi_communicator.h"
#include "comm/roll_call.h"

namespace {

void enter_and_freeze(std::chrono::milliseconds timeout, int late_rank) {
  hpctrain::comm::RollCall roll_call(MPI_COMM_WORLD, timeout, "mpi");
  MPI_Barrier(MPI_COMM_WORLD);
  const std::uint64_t seq = roll_call.arrive();
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == late_rank) std::this_thread::sleep_for(timeout * 10);
  // The others wait like any pending collective: polling the roll call.
  const auto started = hpctrain::comm::Clock::now();
  while (!roll_call.expired(started)) {
    roll_call.poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  roll_call.fail(seq, "allreduce(fp32 sum, 1024 elements)", started);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc == 4 ? argv[3] : "late";
  if ((argc != 3 && argc != 4) || (mode != "late" && mode != "silent")) {
    (void)std::fprintf(stderr, "usage: %s TIMEOUT_MS LATE_RANK [late|silent]\n", argv[0]);
    return 2;
  }
  const hpctrain::handles::MpiRuntime runtime;
  const std::chrono::milliseconds timeout(std::stol(argv[1]));
  const int late_rank = std::stoi(argv[2]);
  if (mode == "silent") enter_and_freeze(timeout, late_rank);
  hpctrain::comm::MpiCommunicator comm(MPI_COMM_WORLD, timeout);
  comm.barrier();
  if (comm.rank() == late_rank) std::this_thread::sleep_for(timeout * 10);
  std::vector<float> data(1024, 1.0F);
  comm.allreduce(data.data(), data.size(), hpctrain::comm::DType::kFloat32, hpctrain::comm::ReduceOp::kSum);
  std::printf("rank %d: the allreduce completed, which it must not\n", comm.rank());
  return 0;
}
