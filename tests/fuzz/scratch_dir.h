// A directory of the harness process's own for the files a harness writes
// before the reader under test opens them: in /dev/shm where there is one, so
// that millions of inputs cost no disk writes.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace hpctrain::fuzz {

inline std::filesystem::path scratch_dir(const std::string& tag) {
  const std::filesystem::path shm = "/dev/shm";
  const auto base = std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path();
  auto dir = base / ("hpctrain-fuzz-" + tag + "-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace hpctrain::fuzz
