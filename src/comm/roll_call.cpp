#include "comm/roll_call.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>

namespace hpctrain::comm {
namespace {

constexpr int kTagCount = 1;
constexpr int kTagQuestion = 2;
constexpr int kTagAnswer = 3;

using namespace std::chrono_literals;

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
      heartbeat_(std::clamp(timeout / 16, std::chrono::milliseconds(20), std::chrono::milliseconds(5000))),
      backend_(std::move(backend)),
      last_sent_(Clock::now()) {
  if (rank_ == 0) seen_.assign(static_cast<std::size_t>(size_), Count{0, 0});
}

RollCall::~RollCall() {
  std::lock_guard lock(mutex_);
  if (rank_ == 0) {
    // Absorb late counts so no message is left unmatched.
    int flag = 1;
    while (flag != 0) {
      MPI_Status status;
      MPI_Iprobe(MPI_ANY_SOURCE, kTagCount, comm_.get(), &flag, &status);
      if (flag != 0) {
        Count count{};
        MPI_Recv(count.data(), 2, MPI_UINT64_T, status.MPI_SOURCE, kTagCount, comm_.get(), MPI_STATUS_IGNORE);
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

void RollCall::send_count() {
  reap_sends();
  sends_.push_back({Count{entered_, ++sent_}, MPI_REQUEST_NULL});
  handles::check_mpi(
      MPI_Isend(sends_.back().count.data(), 2, MPI_UINT64_T, 0, kTagCount, comm_.get(), &sends_.back().request),
      "roll call: MPI_Isend");
  last_sent_ = Clock::now();
}

void RollCall::heartbeat_if_due() {
  if (Clock::now() - last_sent_ >= heartbeat_) send_count();
}

std::uint64_t RollCall::arrive() {
  std::lock_guard lock(mutex_);
  const std::uint64_t seq = ++entered_;
  if (rank_ != 0) send_count();
  return seq;
}

void RollCall::poll() {
  std::lock_guard lock(mutex_);
  if (rank_ != 0) {
    heartbeat_if_due();
    return;
  }
  std::vector<std::pair<int, std::uint64_t>> questions;
  receive_pending(questions);
  // Answering may take a liveness window, during which more questions can come.
  for (std::size_t i = 0; i < questions.size(); ++i) {
    const auto [asker, seq] = questions[i];
    const std::vector<int> missing = missing_for(seq, questions);
    MPI_Send(missing.data(), static_cast<int>(missing.size()), MPI_INT, asker, kTagAnswer, comm_.get());
  }
}

void RollCall::receive_pending(std::vector<std::pair<int, std::uint64_t>>& questions) {
  while (true) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_.get(), &flag, &status);
    if (flag == 0) return;
    Count count{};  // a question carries one number, a count two
    MPI_Recv(count.data(), 2, MPI_UINT64_T, status.MPI_SOURCE, status.MPI_TAG, comm_.get(), MPI_STATUS_IGNORE);
    if (status.MPI_TAG == kTagCount) {
      auto& seen = seen_[static_cast<std::size_t>(status.MPI_SOURCE)];
      seen = {std::max(seen[0], count[0]), std::max(seen[1], count[1])};
    } else if (status.MPI_TAG == kTagQuestion) {
      questions.emplace_back(status.MPI_SOURCE, count[0]);
    }
  }
}

std::vector<int> RollCall::missing_for(std::uint64_t seq, std::vector<std::pair<int, std::uint64_t>>& questions) {
  // Every waiting rank asks about the same collective: one window answers all.
  if (verdict_seq_ == seq) return verdict_;
  receive_pending(questions);
  std::vector<std::uint64_t> sent_before(static_cast<std::size_t>(size_));
  for (std::size_t r = 0; r < seen_.size(); ++r) sent_before[r] = seen_[r][1];
  const auto entered = [&](int r) { return seen_[static_cast<std::size_t>(r)][0] >= seq; };
  const auto heard_since = [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    return seen_[i][1] > sent_before[i];
  };
  // Ranks that entered must prove they are still alive with a new message. At
  // least a second: on an oversubscribed node a live rank can be descheduled for
  // longer than three short heartbeats, and would be named missing.
  const auto window_end = Clock::now() + std::max<std::chrono::milliseconds>(3 * heartbeat_, 1s);
  while (Clock::now() < window_end) {
    bool all_heard = true;
    for (int r = 1; r < size_; ++r) all_heard = all_heard && (!entered(r) || heard_since(r));
    if (all_heard) break;
    std::this_thread::sleep_for(2ms);
    receive_pending(questions);
  }
  std::vector<int> missing;
  if (entered_ < seq) missing.push_back(0);
  for (int r = 1; r < size_; ++r) {
    if (!entered(r) || !heard_since(r)) missing.push_back(r);
  }
  verdict_seq_ = seq;
  verdict_ = missing;
  return missing;
}

void RollCall::fail(std::uint64_t seq, const std::string& what, Clock::time_point started, const std::string& error,
                    const std::function<void()>& before_abort) {
  const double waited = std::chrono::duration<double>(Clock::now() - started).count();
  std::string message =
      error.empty()
          ? fmt::format("hpctrain: {} collective #{} {} did not complete within the {:.0f} s timeout on rank {} of {}",
                        backend_, seq, what, std::chrono::duration<double>(timeout_).count(), rank_, size_)
          : fmt::format("hpctrain: {} collective #{} {} failed on rank {} of {} after {:.1f} s: {}", backend_, seq,
                        what, rank_, size_, waited, error);

  // The job ends here: the other thread, if any, may block on this lock for good.
  std::lock_guard lock(mutex_);
  std::vector<int> missing;
  bool answered = true;
  if (rank_ == 0) {
    std::vector<std::pair<int, std::uint64_t>> unanswered;
    missing = missing_for(seq, unanswered);
  } else {
    // Ask rank 0 which ranks are missing; it answers from its own wait loop,
    // after a liveness window, while this rank keeps its heartbeat going.
    const auto grace = std::clamp(timeout_ / 2, std::chrono::milliseconds(2000), std::chrono::milliseconds(60000));
    MPI_Request question = MPI_REQUEST_NULL;
    MPI_Isend(&seq, 1, MPI_UINT64_T, 0, kTagQuestion, comm_.get(), &question);
    answered = false;
    const auto asked = Clock::now();
    while (!answered && Clock::now() - asked < grace) {
      heartbeat_if_due();
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(0, kTagAnswer, comm_.get(), &flag, &status);
      if (flag != 0) {
        int count = 0;
        MPI_Get_count(&status, MPI_INT, &count);
        missing.resize(static_cast<std::size_t>(count));
        MPI_Recv(missing.data(), count, MPI_INT, 0, kTagAnswer, comm_.get(), MPI_STATUS_IGNORE);
        answered = true;
      } else {
        std::this_thread::sleep_for(5ms);
      }
    }
    if (!answered) MPI_Request_free(&question);
    // Rank 0 is alive and waiting too, so it will report this same collective
    // itself; give it the first word so a large job prints one message, not one per rank.
    const auto answered_at = Clock::now();
    while (answered && Clock::now() - answered_at < grace) {
      heartbeat_if_due();
      std::this_thread::sleep_for(5ms);
    }
  }

  if (!answered) {
    message += "; rank 0 did not answer the roll call, so rank 0 is missing or stuck";
  } else if (missing.empty()) {
    message += "; every rank entered it and is still alive, so the network or MPI failed inside the collective";
  } else {
    message += fmt::format("; rank{} still missing: {}", missing.size() > 1 ? "s" : "", rank_list(missing));
  }
  (void)std::fprintf(stderr, "%s\n", message.c_str());
  (void)std::fflush(stderr);
  (void)std::fflush(stdout);
  if (before_abort) {
    // On a thread of its own, given a few seconds: an abort that hangs (NCCL's,
    // with a kernel stuck on the device) must not keep the job from ending.
    std::packaged_task<void()> task(before_abort);
    std::future<void> done = task.get_future();
    std::thread(std::move(task)).detach();
    (void)done.wait_for(5s);
  }
  // The launcher forwards stderr through a pipe that MPI_Abort's teardown can
  // close before it is drained: give it a moment, or the one line that says
  // what happened may be lost (seen with mpiexec.hydra on a loaded node).
  std::this_thread::sleep_for(500ms);
  MPI_Abort(MPI_COMM_WORLD, kCollectiveFailureExitCode);
  std::_Exit(kCollectiveFailureExitCode);
}

}  // namespace hpctrain::comm
