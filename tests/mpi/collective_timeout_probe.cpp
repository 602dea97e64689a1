// collective_timeout_probe TIMEOUT_MS LATE_RANK [late|silent|frozen] [OPERATION]:
// every rank enters a collective except LATE_RANK, which
//  - late: arrives far past the timeout;
//  - silent: enters the collective and then freezes inside it, neither
//    progressing nor polling, as a rank killed mid-collective looks to the others
//    (the roll call is driven directly, since a real allreduce may complete
//    without the frozen rank's further help);
//  - frozen: posts the real collective, then stops itself (SIGSTOP) inside it.
// OPERATION is the collective: allreduce (1024 fp32, the default),
// allreduce-64mib (16 Mi fp32), broadcast (1024 fp32, rooted at LATE_RANK, so
// nobody can finish without it) or allgather (1024 fp32 per rank).
// The job must end with a message naming LATE_RANK instead of hanging.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "comm/mpi_communicator.h"
#include "comm/roll_call.h"

namespace {

using hpctrain::comm::DType;

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

hpctrain::comm::WorkPtr start(hpctrain::comm::Communicator& comm, const std::string& operation, int late_rank,
                              std::vector<float>& data, std::vector<float>& gathered) {
  if (operation == "allreduce" || operation == "allreduce-64mib") {
    data.assign(operation == "allreduce" ? 1024 : std::size_t{16} << 20, 1.0F);
    return comm.allreduce_async(data.data(), data.size(), DType::kFloat32, hpctrain::comm::ReduceOp::kSum);
  }
  data.assign(1024, 1.0F);
  if (operation == "broadcast") return comm.broadcast_async(data.data(), data.size(), DType::kFloat32, late_rank);
  gathered.resize(data.size() * static_cast<std::size_t>(comm.size()));
  return comm.allgather_async(data.data(), gathered.data(), data.size(), DType::kFloat32);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 4 ? argv[3] : "late";
  const std::string operation = argc >= 5 ? argv[4] : "allreduce";
  const bool known_mode = mode == "late" || mode == "silent" || mode == "frozen";
  const bool known_operation = operation == "allreduce" || operation == "allreduce-64mib" || operation == "broadcast" ||
                               operation == "allgather";
  if (argc < 3 || argc > 5 || !known_mode || !known_operation) {
    (void)std::fprintf(stderr,
                       "usage: %s TIMEOUT_MS LATE_RANK [late|silent|frozen] "
                       "[allreduce|allreduce-64mib|broadcast|allgather]\n",
                       argv[0]);
    return 2;
  }
  const hpctrain::handles::MpiRuntime runtime;
  const std::chrono::milliseconds timeout(std::stol(argv[1]));
  const int late_rank = std::stoi(argv[2]);
  if (mode == "silent") enter_and_freeze(timeout, late_rank);
  hpctrain::comm::MpiCommunicator comm(MPI_COMM_WORLD, timeout);
  comm.barrier();
  const bool late = comm.rank() == late_rank;
  if (late && mode == "late") std::this_thread::sleep_for(timeout * 10);
  std::vector<float> data;
  std::vector<float> gathered;
  auto work = start(comm, operation, late_rank, data, gathered);
  if (late && mode == "frozen") (void)kill(getpid(), SIGSTOP);
  work->wait();
  std::printf("rank %d: the %s completed, which it must not\n", comm.rank(), operation.c_str());
  return 0;
}
