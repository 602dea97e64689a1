#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace hpctrain::optim {

double LrSchedule::at(std::int64_t step) const {
  const config::ScheduleConfig& s = schedule_;
  const std::int64_t done = step - 1;  // steps before this one
  if (done < s.warmup_steps) return peak_ * static_cast<double>(step) / static_cast<double>(s.warmup_steps);
  const double span = static_cast<double>(std::max<std::int64_t>(1, total_steps_ - 1 - s.warmup_steps));
  const double progress = std::clamp(static_cast<double>(done - s.warmup_steps) / span, 0.0, 1.0);
  const double floor = peak_ * s.min_lr_ratio;
  const double pi = std::acos(-1.0);
  double shape = 1;  // kept as one factor: the bits of every logged lr depend on the order
  switch (s.decay) {
    case config::Decay::kConstant: return peak_;
    case config::Decay::kCosine: shape = 0.5 * (1.0 + std::cos(pi * progress)); break;
    case config::Decay::kLinear: shape = 1.0 - progress; break;
  }
  return floor + (peak_ - floor) * shape;
}

}  // namespace hpctrain::optim
