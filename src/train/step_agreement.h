// Every step, each rank contributes its loss, whether it wants to stop (a
// preemption signal reached it), whether that signal was SIGTERM and whether
// it failed to read the samples of a coming step to a small
// non-blocking allreduce on a
// communicator of its own. Results are collected one step late, so in the
// common case no rank ever waits for another here (DDAP ranks stay free to
// drift), yet every rank sees the same mean loss and the same stop decision at
// the same step. What a rank does collectively (evaluate, checkpoint) must
// follow these agreed values, never its own signal: SIGTERM may reach some
// ranks and not others.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace hpctrain::train {

struct AgreedStep {
  std::int64_t step = 0;
  double mean_loss = 0;         // over ranks
  bool stop_requested = false;  // by any rank
  bool terminated = false;      // SIGTERM reached some rank (SLURM ends the job)
  bool unreadable = false;      // some rank cannot read a coming step's samples
};

struct StepVote {
  double loss = 0;
  bool stop = false;
  bool terminated = false;
  bool unreadable = false;
};

class StepAgreement {
 public:
  explicit StepAgreement(comm::Communicator& comm) : comm_(comm) {}
  ~StepAgreement();
  StepAgreement(const StepAgreement&) = delete;
  StepAgreement& operator=(const StepAgreement&) = delete;

  void post(std::int64_t step, const StepVote& vote);
  // Completes, in order, every posted step up to and including `step`.
  std::vector<AgreedStep> settle_through(std::int64_t step);

 private:
  struct Pending {
    std::int64_t step;
    std::array<float, 4> values;  // loss, stop, terminated, unreadable
    comm::WorkPtr work;
  };
  comm::Communicator& comm_;
  std::deque<std::unique_ptr<Pending>> pending_;
};

}  // namespace hpctrain::train
