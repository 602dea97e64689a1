// The text forms of support::build_info(); the data itself is generated at
// build time (cmake/write_build_info.cmake).
#include "support/build_info.h"

#include <fmt/format.h>

namespace hpctrain::support {

std::string commit_with_state() {
  const BuildInfo& b = build_info();
  return fmt::format("{}{}", b.git_commit, b.dirty ? "-dirty" : "");
}

std::string version_with_commit() {
  const BuildInfo& b = build_info();
  return fmt::format("{} (git {}{})", b.version, b.git_commit.substr(0, 12), b.dirty ? ", dirty" : "");
}

std::string version_line(std::string_view program) { return fmt::format("{} {}", program, version_with_commit()); }

}  // namespace hpctrain::support
