// Turning the experiment's data.sources into the sorted list of input files:
// directories are walked (optionally recursively) and filtered by a file-name
// glob, less what data.exclude names; "@python-stdlib" resolves to this
// machine's Python standard library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "config/experiment.h"

namespace hpctrain::data {

enum class InputFormat { kText, kJsonl };

struct SourceFile {
  std::filesystem::path path;
  InputFormat format = InputFormat::kText;
  std::uintmax_t size = 0;
  std::int64_t mtime_ns = 0;  // with size, what makes preparation reuse its result
};

// The Python standard library directory (/usr/lib/python3.X), the quickstart
// corpus: real code, present on every Debian machine with python3.
std::filesystem::path python_stdlib_dir();

// The files of `sources` (data.sources, or a token data set's
// data.validation_sources / data.test_sources; `key` names which in errors),
// sorted by path. Throws DataError naming the source when a path does not exist
// or nothing matches.
std::vector<SourceFile> resolve_sources(const config::DataConfig& data, const std::vector<std::string>& sources,
                                        const std::string& key = "data.sources");
inline std::vector<SourceFile> resolve_sources(const config::DataConfig& data) {
  return resolve_sources(data, data.sources);
}

}  // namespace hpctrain::data
