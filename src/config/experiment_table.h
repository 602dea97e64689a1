// The experiment file read once, for readers that need its TOML table as well
// as the resolved Experiment: jobgen's [slurm] and [sweep], and each sweep
// point's overrides. Every value keeps its origin (file:line:column, or the
// --set that supplied it). toml++ drops those origins when a table is copied,
// so each reader gets a table parsed afresh from the one text that was read:
// the same bytes for every reader, and errors that point at the line.
#pragma once

#include <toml++/toml.h>
#include <string>
#include <vector>

#include "config/experiment.h"

namespace hpctrain::config {

class ExperimentSource {
 public:
  // Reads the file (bounded). It is parsed, with the overrides applied, by
  // each call below, which throw ConfigError with file:line:column or the
  // offending --set.
  ExperimentSource(std::string path, std::vector<std::string> overrides);

  // The table with the overrides, then `more`, applied.
  [[nodiscard]] toml::table table(const std::vector<std::string>& more = {}) const;
  // The experiment it resolves to, with `more` applied (a sweep point's).
  [[nodiscard]] Experiment resolve(const std::vector<std::string>& more = {}) const;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string text_;
  std::vector<std::string> overrides_;
};

}  // namespace hpctrain::config
