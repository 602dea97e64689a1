// An experiment rendered as a SLURM batch script: the [slurm] request and the
// cluster profile become #SBATCH directives (each stamped with the line, --set
// or profile it came from), the resolved config is embedded in the script, and
// a provenance header records the jobgen version, the experiment repository's
// commit and dirty flag, and the config's SHA-256. Every value in the data
// handed to the template is already encoded for where the template puts it
// (encoding.h), so a template interpolates with identity escaping.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "jobgen/cluster_profile.h"
#include "jobgen/search_path.h"
#include "jobgen/slurm_request.h"
#include "jobgen/sweep.h"

namespace hpctrain::jobgen {

struct Directive {
  std::string flag;   // "--nodes"
  std::string value;  // raw; empty for a bare flag
  std::string source;
};

// Dependencies on other jobs: `--after JOBID[:type]` and `--singleton`.
struct Dependencies {
  std::vector<std::string> after;  // "123" (afterok) or "123:afterany"
  bool singleton = false;
};

struct BatchJob {
  config::Experiment experiment;
  ClusterProfile profile;
  SlurmRequest request;
  Sweep sweep;
  std::vector<Directive> directives;
  std::string config_sha256;
  std::string git;  // "<commit>", "<commit> (dirty)" or "not in a git repository"
};

// Throws ConfigError naming the field (and the sweep index) for anything wrong.
BatchJob plan_batch_job(const std::string& experiment_file, const std::vector<std::string>& overrides,
                        const std::string& cluster, const Dependencies& dependencies, const JobgenPaths& paths);

// The job that prepares `job`'s data set on CPUs (jobgen --prepare), so that
// the training job's GPUs do not wait while its rank 0 tokenizes: one task
// on one node with the profile's cpus_per_node, no GPUs, no preemption
// handling (a rerun reuses what was prepared), no array. Throws ConfigError
// for a sweep whose points set data.* keys.
BatchJob preparation_job(BatchJob job, const Dependencies& dependencies);

// The template's data: every value encoded for its place in the script.
nlohmann::json batch_script_data(const BatchJob& job);

// One line per directive and export: the value and what produced it.
std::string explain(const BatchJob& job);

// Creates the log directory (SLURM opens the log before the script runs),
// submits `script` with sbatch and returns "submitted batch job ID".
std::string submit(const BatchJob& job, const std::string& script);

// NAME (templates/NAME.mustache) or a file.
std::string render_batch_script(const BatchJob& job, const std::string& template_name, const JobgenPaths& paths);

}  // namespace hpctrain::jobgen
