#include "runtime/memory_usage.h"

#include <fstream>
#include <sstream>
#include <string>

namespace hpctrain::runtime {

std::int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) != 0) continue;
    std::istringstream fields(line.substr(6));
    std::int64_t kib = -1;
    std::string unit;
    fields >> kib >> unit;
    return fields && unit == "kB" && kib >= 0 ? kib * 1024 : -1;
  }
  return -1;
}

}  // namespace hpctrain::runtime
