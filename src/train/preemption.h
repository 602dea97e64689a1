// The signals that end a run early with a checkpoint. checkpoint.signal (USR1,
// USR2 or TERM) is the early warning `sbatch --signal` or `scancel --signal`
// sends ahead of the end; SIGTERM is what SLURM itself sends every step on
// preemption, at the time limit and on a plain `scancel`, followed by SIGKILL
// KillWait seconds later (30 by default). Either one asks for a checkpoint and
// exit config::kRequeueExitCode. The handler only records which signal came
// and when; the training loop turns that into an agreed stop (StepAgreement)
// and a checkpoint written before it exits.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "config/experiment.h"

namespace hpctrain::train {

class PreemptionSignal {
 public:
  // Installs the handlers for `signal` and SIGTERM.
  explicit PreemptionSignal(config::Signal signal);
  // Restores the previous dispositions.
  ~PreemptionSignal();
  PreemptionSignal(const PreemptionSignal&) = delete;
  PreemptionSignal& operator=(const PreemptionSignal&) = delete;

  [[nodiscard]] bool raised() const;
  // The first signal that came ("USR1", "TERM"), once one has.
  [[nodiscard]] std::string received() const;
  // Whether SIGTERM came (first or after the early warning).
  [[nodiscard]] bool terminated() const;
  // When the first signal came (steady clock).
  [[nodiscard]] std::optional<std::chrono::steady_clock::time_point> received_at() const;
  // The early-warning signal's name (checkpoint.signal).
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
  int number_;
  bool term_too_;  // SIGTERM handled besides checkpoint.signal
};

}  // namespace hpctrain::train
