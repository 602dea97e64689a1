// The SLURM job and step a process runs in, read from SLURM_* variables and
// checked for consistency. Absent outside SLURM.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster/environment.h"

namespace hpctrain::cluster {

struct SlurmEnv {
  std::string job_id;
  int restart_count = 0;               // SLURM_RESTART_COUNT: requeues so far
  std::vector<std::string> job_nodes;  // SLURM_JOB_NODELIST, expanded
  bool in_step = false;                // started by srun, not the batch shell or salloc
  std::vector<std::string> nodes;      // the step's nodes in a step, else the job's
  std::vector<int> tasks_per_node;     // one entry per element of `nodes`
  int num_tasks = 1;                   // SLURM_STEP_NUM_TASKS in a step, else SLURM_NTASKS
  int proc_id = 0;                     // SLURM_PROCID
  int local_id = 0;                    // SLURM_LOCALID
  int node_id = 0;                     // SLURM_NODEID

  // The node rank 0 runs on: Slurm places task 0 on the first node of the step.
  [[nodiscard]] const std::string& head_node() const { return nodes.front(); }

  // nullopt when SLURM_JOB_ID is unset. Throws ClusterError naming the variable
  // when a value is malformed, missing or contradicts another.
  static std::optional<SlurmEnv> detect(const Environment& env);
};

// How the ranks of this process were started.
enum class Launcher {
  kSingleton,  // no launcher: a one-rank run
  kMpiexec,    // MPICH's Hydra (mpiexec/mpirun), possibly inside a SLURM allocation
  kSrun,       // a SLURM job step whose tasks are the MPI ranks
};

Launcher detect_launcher(const Environment& env);
const char* to_string(Launcher launcher);

}  // namespace hpctrain::cluster
