// [logging]: how often a training record is written.
#pragma once

#include <cstdint>

namespace hpctrain::config {

class SectionReader;

struct LoggingConfig {
  std::int64_t interval = 10;  // steps between metric records

  [[nodiscard]] bool should_log(std::int64_t step, bool last) const { return last || step % interval == 0; }

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static LoggingConfig read(SectionReader section);
};

}  // namespace hpctrain::config
