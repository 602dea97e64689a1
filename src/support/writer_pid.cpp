#include "support/writer_pid.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace hpctrain::support {

std::optional<pid_t> pid_in_name(std::string_view digits) {
  if (digits.empty() || digits.size() > 9 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  const auto pid = static_cast<pid_t>(std::stol(std::string(digits)));
  if (pid <= 0) return std::nullopt;
  return pid;
}

bool runs_on_this_host(pid_t pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace hpctrain::support
