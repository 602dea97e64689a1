#include "config/training_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

TrainingConfig TrainingConfig::read(SectionReader section) {
  TrainingConfig t;
  t.steps = section.integer("steps", t.steps, 0, kNoLimit);
  t.batch_size = section.integer("batch_size", t.batch_size, 1, 1 << 24);
  t.micro_batch_size = section.integer("micro_batch_size", t.micro_batch_size, 1, 1 << 24);
  t.precision = section.choice("precision", t.precision);
  t.device = section.choice("device", t.device);
  t.threads = section.integer("threads", t.threads, 0, 1024);
  t.stop_after = section.integer("stop_after", t.stop_after, 0, kNoLimit);
  t.ema_decay = section.number("ema_decay", t.ema_decay, 0.0, 0.999999);
  section.finish();
  return t;
}

}  // namespace hpctrain::config
