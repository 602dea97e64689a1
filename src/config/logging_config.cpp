#include "config/logging_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

LoggingConfig LoggingConfig::read(SectionReader section) {
  LoggingConfig l;
  l.interval = section.integer("interval", l.interval, 1, kNoLimit);
  section.finish();
  return l;
}

}  // namespace hpctrain::config
