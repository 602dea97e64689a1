// The experiment file as toml++ parsed it, with --set overrides applied; every
// value keeps its origin (file:line:column, or the --set that supplied it).
// For readers of sections the trainer only passes through: jobgen's [slurm].
#pragma once

#include <toml++/toml.h>
#include <string>
#include <vector>

namespace hpctrain::config {

// The experiment file as TOML, parsed once, with the --set overrides applied.
// Throws ConfigError with file:line:column on a TOML syntax error or a bad --set.
toml::table load_experiment_table(const std::string& path, const std::vector<std::string>& overrides);

// The experiment a table (from load_experiment_table) resolves to, with
// further overrides applied to a copy (a sweep point's); `path` names it in errors.
Experiment resolve_experiment(toml::table table, const std::string& path,
                              const std::vector<std::string>& overrides = {});

}  // namespace hpctrain::config
