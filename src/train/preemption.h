// The signals that end a run early. checkpoint.signal (USR1, USR2 or TERM) is
// the early warning `sbatch --signal` or `scancel --signal` sends ahead of the
// end; SIGTERM is what SLURM itself sends every step on preemption, at the
// time limit and on a plain `scancel`, followed by SIGKILL KillWait seconds
// later (30 by default). Both are answered with exit config::kRequeueExitCode
// ("requeue me") in every phase of every command that starts MPI or trains
// (the `ckpt` and `hostnames` commands do neither: there the signals keep
// their default action, which ends them):
//  - before a training loop exists (data preparation, resume verification,
//    eval, generate, prepare) there is nothing to checkpoint: the process
//    says so on stderr and exits at once (exit_on_preemption_signals);
//  - from the trainer's PreemptionSignal on, the handler only records which
//    signal came and when; the training loop turns that into an agreed stop
//    (StepAgreement) and a checkpoint written before it exits.
// The handlers stay until the process ends: a second signal while the last
// checkpoint is written or MPI shuts down is recorded, never fatal (a default
// action restored there would turn exit 75 into 143). They are installed after
// MPI starts, whose library may install its own for SIGUSR1.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "config/experiment.h"

namespace hpctrain::train {

// Installs the handlers for `signal` and SIGTERM: until a PreemptionSignal
// exists, either one ends the process at once with exit 75 and one line on
// stderr naming the signal.
void exit_on_preemption_signals(config::Signal signal);
// The same for every signal checkpoint.signal may name and SIGTERM: for
// commands that start before they know the experiment (eval, generate,
// doctor).
void exit_on_any_preemption_signal();

class PreemptionSignal {
 public:
  // Installs the handlers for `signal` and SIGTERM (if not yet) and from now
  // on records the first signal instead of exiting.
  explicit PreemptionSignal(config::Signal signal);

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
};

}  // namespace hpctrain::train
