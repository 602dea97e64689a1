// The learning rate at each step: linear warm-up to the peak over
// warmup_steps (step 1 takes peak / warmup_steps), then cosine or linear decay
// to peak * min_lr_ratio at the last step (or constant). A pure function of the
// step and the config, so the step is a checkpoint's whole schedule state.
#pragma once

#include <cstdint>

#include "config/experiment.h"

namespace hpctrain::optim {

// The schedule of a run: [schedule] with optimizer.lr as the peak, over training.steps.
class LrSchedule {
 public:
  LrSchedule(const config::ScheduleConfig& schedule, double peak, std::int64_t total_steps)
      : schedule_(schedule), peak_(peak), total_steps_(total_steps) {}

  // The learning rate of optimizer step `step`, counted from 1.
  [[nodiscard]] double at(std::int64_t step) const;

 private:
  config::ScheduleConfig schedule_;
  double peak_;
  std::int64_t total_steps_;
};

}  // namespace hpctrain::optim
