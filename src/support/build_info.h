// What a binary was built from: the project's version (CMake's
// project(VERSION)), the git commit of its sources and whether they had
// uncommitted changes. The commit is read at build time, so a rebuild after a
// commit never reports the commit of the last configure.
#pragma once

#include <string>
#include <string_view>

namespace hpctrain::support {

struct BuildInfo {
  std::string_view version;
  std::string_view git_commit;  // "unknown" outside a git checkout
  bool dirty;                   // tracked files differed from git_commit
};

// Defined in a file generated at build time (cmake/write_build_info.cmake).
const BuildInfo& build_info();

// "0.1.0 (git 1b8d25d1c0de, dirty)": the version with the commit's first 12
// digits, as batch scripts' headers record it.
std::string version_with_commit();

// "PROGRAM 0.1.0 (git 1b8d25d1c0de, dirty)": the first line of --version.
std::string version_line(std::string_view program);

// The commit with "-dirty" appended when the sources had uncommitted changes.
std::string commit_with_state();

}  // namespace hpctrain::support
