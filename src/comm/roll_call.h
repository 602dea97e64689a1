// Collective timeouts that name the ranks still missing.
//
// Every rank counts the collectives it enters on a communicator. Entering one,
// a rank other than 0 sends its count to rank 0 on a private duplicate of the
// communicator (one small eager message); rank 0 keeps the latest count per rank
// while it waits on its own collectives. A rank that keeps waiting repeats its
// count as a heartbeat (every timeout/16), numbered, so that a rank that entered
// a collective and then died or froze inside it can be told apart from the ranks
// waiting alongside rank 0.
//
// A rank is missing from a collective when its count is behind, or when it sends
// no new heartbeat during a liveness window (three heartbeats, at least 1 s) that rank 0
// watches when asked. The window is judged by heartbeat numbers, not by arrival
// times, because rank 0 may drain a dead rank's last messages late. When a
// collective overruns the timeout:
//  - rank 0 lists the missing ranks and ends the job;
//  - any other rank asks rank 0 for that list and, when rank 0 does not answer
//    within a grace period, reports rank 0 itself as missing, then ends the job.
// Ending the job is MPI_Abort: a timed-out collective cannot be recovered, and
// the launcher (mpiexec or srun) then tears down every rank.
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
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
  // Cheap; call it from wait loops. Rank 0 absorbs counts and answers other
  // ranks' questions; the others send a heartbeat when one is due.
  void poll();

  [[nodiscard]] std::chrono::milliseconds timeout() const { return timeout_; }
  [[nodiscard]] bool expired(Clock::time_point started) const { return Clock::now() - started > timeout_; }

  // Reports collective `seq` (described by `what`) as timed out, or as failed
  // with `error`, then ends the job. Never returns. `before_abort` runs after
  // the report is printed and before MPI_Abort (NCCL aborts its communicator
  // there): should it hang, the report is already out.
  [[noreturn]] void fail(std::uint64_t seq, const std::string& what, Clock::time_point started,
                         const std::string& error = {}, const std::function<void()>& before_abort = {});

 private:
  // {latest collective entered, number of messages sent so far}
  using Count = std::array<std::uint64_t, 2>;

  // Rank 0, mutex held: receives every pending message; questions are appended
  // to `questions` as {asking rank, sequence number}.
  void receive_pending(std::vector<std::pair<int, std::uint64_t>>& questions);
  // Rank 0, mutex held: the ranks missing from collective `seq`. Watches the
  // liveness window once per collective; later questions get the same verdict.
  std::vector<int> missing_for(std::uint64_t seq, std::vector<std::pair<int, std::uint64_t>>& questions);
  // Other ranks, mutex held.
  void send_count();
  void heartbeat_if_due();
  void reap_sends();

  handles::MpiComm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds heartbeat_;
  std::string backend_;
  std::mutex mutex_;  // the reducer's communication thread and the main thread share this
  std::uint64_t entered_ = 0;
  std::uint64_t sent_ = 0;
  Clock::time_point last_sent_;
  std::vector<Count> seen_;        // rank 0: latest count from each rank
  std::uint64_t verdict_seq_ = 0;  // rank 0: the collective last judged, and its missing ranks
  std::vector<int> verdict_;
  struct PendingSend {
    Count count;
    MPI_Request request;
  };
  std::deque<PendingSend> sends_;
};

}  // namespace hpctrain::comm
