// A cluster profile (env/clusters/NAME.toml): what a site adds to every job.
// A profile may `inherits = "other"`; its own keys win, lists and [env] merge.
//   partition, account, qos, constraint   sbatch defaults
//   gpus_per_node, cpus_per_node           the nodes' shape (0: not stated)
//   modules = [...]                        `module load`, in order
//   executable                             the hpctrain binary on the nodes
//   mpi                                    srun --mpi plugin (pmi2 for MPICH)
//   [env]                                  exported before the step (NCCL, UCX, ...)
//   signal_lead_s, on_preempt              how the site preempts: defaults for the
//                                          [slurm] keys of those names
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "jobgen/search_path.h"

namespace hpctrain::jobgen {

struct ClusterProfile {
  std::string name;
  std::vector<std::string> chain;  // the files read, most specific first
  std::string partition;
  std::string account;
  std::string qos;
  std::string constraint;
  std::int64_t gpus_per_node = 0;
  std::int64_t cpus_per_node = 0;
  std::vector<std::string> modules;
  std::string executable = "hpctrain";
  std::string mpi = "pmi2";
  std::vector<std::pair<std::string, std::string>> env;
  // What a site decides for every job: 0 where it does not deliver --signal;
  // "resubmit" where users may not requeue. Empty source: not set by the profile.
  std::int64_t signal_lead_s = 120;
  std::string signal_lead_s_source;
  std::string on_preempt = "requeue";
  std::string on_preempt_source;
};

// NAME (NAME.toml, found by `paths`) or a .toml path. A parent named by
// `inherits` is looked for beside the profile first, then by `paths`. Throws
// with file:line:column on bad TOML, an unknown key, or an inheritance cycle.
ClusterProfile load_cluster_profile(const std::string& name_or_file, const JobgenPaths& paths);

}  // namespace hpctrain::jobgen
