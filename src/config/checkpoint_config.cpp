#include "config/checkpoint_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

CheckpointConfig CheckpointConfig::read(SectionReader section) {
  CheckpointConfig c;
  c.interval = section.integer("interval", c.interval, 0, kNoLimit);
  c.keep = section.integer("keep", c.keep, 0, kNoLimit);
  c.keep_best = section.boolean("keep_best", c.keep_best);
  c.async = section.boolean("async", c.async);
  c.sharded = section.boolean("sharded", c.sharded);
  // "auto", "never", or any other string: the checkpoint file to resume from.
  const std::string resume = section.string("resume", "auto");
  c.resume = resume == "auto" ? ResumeMode::kAuto : resume == "never" ? ResumeMode::kNever : ResumeMode::kFile;
  if (c.resume == ResumeMode::kFile) c.resume_file = resume;
  c.signal = section.choice("signal", c.signal);
  section.finish();
  return c;
}

}  // namespace hpctrain::config
