#include "comm/roll_call.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace hpctrain::comm {
namespace {

constexpr int kTagArrive = 1;
constexpr int kTagQuery = 2;
constexpr int kTagAnswer = 3;

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

}  // namespace

RollCall::RollCall(MPI_Comm parent, std::chrono::milliseconds timeout, std::string backend)
    : comm_(handles::MpiComm::dup(parent)),
      rank_(comm_.rank()),
      size_(comm_.size()),
      timeout_(timeout),
      backend_(std::move(backend)) {
  if (rank_ == 0) seen_.assign(static_cast<std::size_t>(size_), 0);
}

RollCall::~RollCall() {
  std::lock_guard lock(mutex_);
  if (rank_ == 0) {
    // Absorb late arrivals so no message is left unmatched.
    int flag = 1;
    while (flag != 0) {
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagArrive, comm_.get(), &flag, &status);
      if (flag != 0) {
        std::uint64_t seq = 0;
        MPI_Recv(&seq, 1, MPI_UINT64_T, status.MPI_SOURCE, kTagArrive, comm_.get(), MPI_STATUS_IGNORE);
      }
    }
  }
  for (auto& send : sends_) MPI_Request_free(&send.request);
}

void RollCall::reap_sends() {
  while (!sends_.empty()) {
    int done = 0;
    MPI_Test(&sends_.front().request, &done, MPI_STATUS_IGNORE);
    if (done == 0) break;
    sends_.pop_front();
  }
}

std::uint64_t RollCall::arrive() {
  std::lock_guard lock(mutex_);
  const std::uint64_t seq = ++entered_;
  if (rank_ != 0) {
    reap_sends();
    sends_.push_back({seq, MPI_REQUEST_NULL});
    handles::check_mpi(
        MPI_Isend(&sends_.back().seq, 1, MPI_UINT64_T, 0, kTagArrive, comm_.get(), &sends_.back().request),
        "roll call: MPI_Isend");
  }
  return seq;
}

void RollCall::poll() {
  if (rank_ != 0) return;
  std::lock_guard lock(mutex_);
  while (true) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_.get(), &flag, &status);
    if (flag == 0) return;
    std::uint64_t seq = 0;
    MPI_Recv(&seq, 1, MPI_UINT64_T, status.MPI_SOURCE, status.MPI_TAG, comm_.get(), MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kTagArrive) {
      auto& seen = seen_[static_cast<std::size_t>(status.MPI_SOURCE)];
      seen = std::max(seen, seq);
    } else if (status.MPI_TAG == kTagQuery) {
      const std::vector<int> missing = missing_for(seq);
      MPI_Send(missing.data(), static_cast<int>(missing.size()), MPI_INT, status.MPI_SOURCE, kTagAnswer, comm_.get());
    }
  }
}

std::vector<int> RollCall::missing_for(std::uint64_t seq) {
  std::vector<int> missing;
  if (entered_ < seq) missing.push_back(0);
  for (int r = 1; r < size_; ++r) {
    if (seen_[static_cast<std::size_t>(r)] < seq) missing.push_back(r);
  }
  return missing;
}

void RollCall::fail(std::uint64_t seq, const std::string& what, Clock::time_point started, const std::string& error) {
  const double waited = std::chrono::duration<double>(Clock::now() - started).count();
  std::string message =
      error.empty()
          ? fmt::format("hpctrain: {} collective #{} {} did not complete within the {:.0f} s timeout on rank {} of {}",
                        backend_, seq, what, std::chrono::duration<double>(timeout_).count(), rank_, size_)
          : fmt::format("hpctrain: {} collective #{} {} failed on rank {} of {} after {:.1f} s: {}", backend_, seq,
                        what, rank_, size_, waited, error);

  std::vector<int> missing;
  bool answered = true;
  if (rank_ == 0) {
    poll();
    std::lock_guard lock(mutex_);
    missing = missing_for(seq);
  } else {
    // Ask rank 0 which ranks never arrived; it answers from its own wait loop.
    const auto grace = std::clamp(timeout_ / 4, std::chrono::milliseconds(2000), std::chrono::milliseconds(30000));
    MPI_Request query = MPI_REQUEST_NULL;
    MPI_Isend(&seq, 1, MPI_UINT64_T, 0, kTagQuery, comm_.get(), &query);
    answered = false;
    const auto asked = Clock::now();
    while (Clock::now() - asked < grace) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(0, kTagAnswer, comm_.get(), &flag, &status);
      if (flag != 0) {
        int count = 0;
        MPI_Get_count(&status, MPI_INT, &count);
        missing.resize(static_cast<std::size_t>(count));
        MPI_Recv(missing.data(), count, MPI_INT, 0, kTagAnswer, comm_.get(), MPI_STATUS_IGNORE);
        answered = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!answered) MPI_Request_free(&query);
    // Rank 0 is alive and waiting too, so it will report this same collective
    // itself; give it the first word so a large job prints one message, not one per rank.
    if (answered) std::this_thread::sleep_for(grace);
  }

  if (!answered) {
    message += "; rank 0 did not answer the roll call, so rank 0 is missing or stuck";
  } else if (missing.empty()) {
    message += "; every rank entered it, so the network or a peer process failed inside the collective";
  } else {
    message += fmt::format("; rank{} still missing: {}", missing.size() > 1 ? "s" : "", rank_list(missing));
  }
  (void)std::fprintf(stderr, "%s\n", message.c_str());
  (void)std::fflush(stderr);
  (void)std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, kCollectiveFailureExitCode);
  std::_Exit(kCollectiveFailureExitCode);
}

}  // namespace hpctrain::comm
