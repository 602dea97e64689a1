// [job]: the run's name, seed and directory.
#pragma once

#include <cstdint>
#include <string>

namespace hpctrain::config {

class SectionReader;

struct JobConfig {
  std::string name;  // default: the experiment file's stem
  std::uint64_t seed = 1234;
  std::string run_dir;  // default: runs/<name>

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  // `path`: the experiment file, whose stem is the default name.
  static JobConfig read(SectionReader section, const std::string& path);
};

}  // namespace hpctrain::config
