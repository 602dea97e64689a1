// The preemption signal (checkpoint.signal: USR1, USR2 or TERM, as sent ahead
// of the end by `sbatch --signal` or `scancel --signal`). The handler only
// records that the signal came; the training loop turns that into an agreed
// stop (StepAgreement), a checkpoint and config::kRequeueExitCode.
#pragma once

#include <string>

#include "config/experiment.h"

namespace hpctrain::train {

class PreemptionSignal {
 public:
  // Installs the handler.
  explicit PreemptionSignal(config::Signal signal);
  // Restores the previous disposition.
  ~PreemptionSignal();
  PreemptionSignal(const PreemptionSignal&) = delete;
  PreemptionSignal& operator=(const PreemptionSignal&) = delete;

  [[nodiscard]] bool raised() const;
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
  int number_;
};

}  // namespace hpctrain::train
