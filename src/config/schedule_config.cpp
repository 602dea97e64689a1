#include "config/schedule_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

ScheduleConfig ScheduleConfig::read(SectionReader section) {
  ScheduleConfig s;
  s.warmup_steps = section.integer("warmup_steps", s.warmup_steps, 0, kNoLimit);
  s.decay = section.choice("decay", s.decay);
  s.min_lr_ratio = section.number("min_lr_ratio", s.min_lr_ratio, 0.0, 1.0);
  section.finish();
  return s;
}

}  // namespace hpctrain::config
