// [sweep]: one experiment, many runs, as one SLURM job array.
//   mode = "grid"            every combination (the first parameter varies slowest)
//        | "zip"             the i-th value of every parameter together
//   max_parallel = 4         the array's %max throttle (0: no limit)
//   [sweep.parameters]
//   "optimizer.lr" = [1e-3, 3e-4]       section.key = [values]
// Each array index runs with its overrides, in RUN_DIR/<index>; the manifest
// maps indexes to overrides.
#pragma once

#include <toml++/toml.h>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "config/choices.h"

namespace hpctrain::jobgen {

enum class SweepMode { kGrid, kZip };

struct SweepPoint {
  // (section.key, the value as TOML text, e.g. "0.001" or "'adamw'")
  std::vector<std::pair<std::string, std::string>> overrides;
};

struct Sweep {
  SweepMode mode = SweepMode::kGrid;
  std::int64_t max_parallel = 0;
  std::vector<SweepPoint> points;  // empty: no sweep
};

// Throws ConfigError with file:line:column for a bad [sweep].
Sweep read_sweep(const toml::table& experiment);

// {"0": {"optimizer.lr": 0.001, ...}, ...}
nlohmann::json sweep_manifest(const Sweep& sweep);

}  // namespace hpctrain::jobgen

template <>
struct hpctrain::config::ChoiceTable<hpctrain::jobgen::SweepMode> {
  static constexpr std::array<Choice<hpctrain::jobgen::SweepMode>, 2> entries{
      {{"grid", hpctrain::jobgen::SweepMode::kGrid}, {"zip", hpctrain::jobgen::SweepMode::kZip}}};
};
