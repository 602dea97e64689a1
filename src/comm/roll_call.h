// Collective timeouts that name the ranks still missing.
//
// Every rank counts the collectives it enters on a communicator. Entering one,
// a rank other than 0 sends its count to rank 0 on a private duplicate of the
// communicator (one small eager message); rank 0 keeps the latest count per rank
// while it waits on its own collectives. When a collective overruns the timeout:
//  - rank 0 lists the ranks whose count is behind and ends the job;
//  - any other rank asks rank 0 for that list and, when rank 0 does not answer
//    within a grace period, reports rank 0 itself as missing, then ends the job.
// Ending the job is MPI_Abort: a timed-out collective cannot be recovered, and
// the launcher (mpiexec or srun) then tears down every rank.
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "handles/mpi.h"

namespace hpctrain::comm {

// Exit status of a job ended by a collective timeout or a failed collective.
constexpr int kCollectiveFailureExitCode = 124;

using Clock = std::chrono::steady_clock;

class RollCall {
 public:
  RollCall(MPI_Comm parent, std::chrono::milliseconds timeout, std::string backend);
  ~RollCall();
  RollCall(const RollCall&) = delete;
  RollCall& operator=(const RollCall&) = delete;

  // Registers entry into the next collective; returns its sequence number.
  std::uint64_t arrive();
  // Rank 0: absorbs arrivals and answers other ranks' questions. Cheap; call it
  // from wait loops.
  void poll();

  [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }
  [[nodiscard]] bool expired(Clock::time_point started) const { return Clock::now() - started > timeout_; }

  // Reports collective `seq` (described by `what`) as timed out, or as failed
  // with `error`, then ends the job. Never returns.
  [[noreturn]] void fail(std::uint64_t seq, const std::string& what, Clock::time_point started,
                         const std::string& error = {});

 private:
  std::vector<int> missing_for(std::uint64_t seq);
  void reap_sends();

  handles::MpiComm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::milliseconds timeout_;
  std::string backend_;
  std::mutex mutex_;  // the reducer's communication thread and the main thread share this
  std::uint64_t entered_ = 0;
  std::vector<std::uint64_t> seen_;  // rank 0: latest sequence number each rank entered
  struct PendingSend {
    std::uint64_t seq;
    MPI_Request request;
  };
  std::deque<PendingSend> sends_;
};

}  // namespace hpctrain::comm
