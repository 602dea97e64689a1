// A value of the batch request together with where it came from, for the
// provenance comments in the script and `jobgen --explain`.
#pragma once

#include <string>

namespace hpctrain::jobgen {

struct Sourced {
  std::string value;
  std::string source;  // "exp.toml:12:9", "--set slurm.nodes=2", "profile local", "default"
};

}  // namespace hpctrain::jobgen
