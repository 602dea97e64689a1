// The learning rate at each step: linear warm-up from 0 to the peak over
// warmup_steps, then cosine or linear decay to peak * min_lr_ratio at the last
// step (or constant).
#pragma once

#include <cstdint>

#include "config/experiment.h"

namespace hpctrain::train {

double learning_rate(std::int64_t step, std::int64_t total_steps, double peak, const config::ScheduleConfig& s);

}  // namespace hpctrain::train
