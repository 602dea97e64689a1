// The experiment's [slurm] section: what to ask sbatch for, combined with a
// cluster profile, and checked for consistency before anything is submitted.
//   job_name, partition, account, qos, constraint   (profile defaults)
//   nodes, ntasks_per_node, cpus_per_task, gpus_per_node, mem, time
//   signal (default: checkpoint.signal), signal_lead_s (0: none), max_restarts,
//   on_preempt (requeue | resubmit | stop)
//   log_dir, executable (default: the profile's)
//   gpus_per_task, gpu_bind, cpu_bind, exclusive, reservation, exclude,
//   nodelist, mail_type, mail_user, srun_args, [slurm.extra] (site_options.h)
//   [slurm.env]  NAME = "literal" | { runtime = "$VAR/expands/at/run/time" }
// Every value remembers where it came from (file:line:column, --set, or the
// profile) for the provenance comments and `jobgen explain`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "config/experiment.h"
#include "jobgen/cluster_profile.h"
#include "jobgen/site_options.h"
#include "jobgen/sourced.h"

namespace hpctrain::jobgen {

struct EnvVar {
  std::string name;
  std::string value;
  bool runtime = false;  // expands $VAR at run time
  std::string source;
};

struct SlurmRequest {
  Sourced job_name, partition, account, qos, constraint, mem, time;
  Sourced nodes, ntasks_per_node, cpus_per_task, gpus_per_node;
  Sourced signal, signal_lead_s, max_restarts, on_preempt, log_dir, executable;
  std::vector<EnvVar> env;
  SiteOptions site;
  std::int64_t time_seconds = 0;
};

// SLURM's time formats: M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. Throws on others.
std::int64_t parse_slurm_time(const std::string& text, const std::string& field);

// [slurm] of the experiment's table (config/experiment_table.h). Throws
// ConfigError naming file:line:column (or the --set) for bad values, and
// explaining inconsistent resources.
SlurmRequest read_slurm_request(toml::table root, const config::Experiment& experiment, const ClusterProfile& profile);

}  // namespace hpctrain::jobgen
