// Force-included into the Mustache harness when tests/fuzz/fuzz-before-fixes.sh
// builds it against the code before the hostile-input fixes. That code read
// template data only from files (load_data_file: JSON, or TOML by the .toml
// extension) and took partials as a plain map; the two functions below give
// the harness today's entry points over exactly that old code path.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "jobgen/data_file.h"
#include "jobgen/mustache.h"

namespace hpctrain::jobgen {

inline nlohmann::json parse_data(const std::string& text, const std::string& /*origin*/, bool toml) {
  const std::filesystem::path shm = "/dev/shm";
  const auto dir = std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path();
  const auto path = dir / ("hpctrain-fuzz-before-fixes-" + std::to_string(getpid()) + (toml ? ".toml" : ".json"));
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return load_data_file(path);
}

inline const Partials& partials_from(const Partials& partials) { return partials; }

}  // namespace hpctrain::jobgen
