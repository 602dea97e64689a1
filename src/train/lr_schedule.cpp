#include "train/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace hpctrain::train {

double learning_rate(std::int64_t step, std::int64_t total_steps, double peak, const config::ScheduleConfig& s) {
  if (step < s.warmup_steps) return peak * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps);
  if (s.decay == "constant") return peak;
  const double span = static_cast<double>(std::max<std::int64_t>(1, total_steps - 1 - s.warmup_steps));
  const double progress = std::clamp(static_cast<double>(step - s.warmup_steps) / span, 0.0, 1.0);
  const double floor = peak * s.min_lr_ratio;
  const double pi = std::acos(-1.0);
  const double shape = s.decay == "cosine" ? 0.5 * (1.0 + std::cos(pi * progress)) : 1.0 - progress;
  return floor + (peak - floor) * shape;
}

}  // namespace hpctrain::train
