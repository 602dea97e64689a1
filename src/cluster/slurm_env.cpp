#include "cluster/slurm_env.h"

#include <fmt/format.h>

#include <limits>
#include <numeric>

#include "cluster/error.h"
#include "cluster/hostlist.h"
#include "cluster/parse_int.h"
#include "cluster/tasks_per_node.h"

namespace hpctrain::cluster {
namespace {

// The tasks a tasks-per-node list adds up to, summed without wrapping: a
// crafted list ("2147483647,1") must not come out as a small or zero count.
int task_total(const std::vector<int>& tasks_per_node, const std::string& variable) {
  std::int64_t total = 0;
  for (const int n : tasks_per_node) {
    total += n;
    if (total > std::numeric_limits<int>::max()) {
      throw ClusterError(fmt::format("{} adds up to more than {} tasks", variable, std::numeric_limits<int>::max()));
    }
  }
  return static_cast<int>(total);
}

std::string require(const Environment& env, const std::string& name, const std::string& why) {
  auto value = env.get(name);
  if (!value) throw ClusterError(fmt::format("{} is not set, but {}", name, why));
  return *value;
}

int parse_count(const std::string& name, const std::string& value) {
  const auto n = parse_non_negative(value);
  if (!n) throw ClusterError(fmt::format("{}='{}' is not a non-negative integer", name, value));
  return *n;
}

int optional_count(const Environment& env, const std::string& name, int fallback) {
  auto value = env.get(name);
  return value ? parse_count(name, *value) : fallback;
}

std::vector<std::string> node_list(const std::string& name, const std::string& value) {
  try {
    auto nodes = expand_hostlist(value);
    if (nodes.empty()) throw ClusterError("it names no node");
    return nodes;
  } catch (const ClusterError& e) {
    throw ClusterError(fmt::format("{}: {}", name, e.what()));
  }
}

void check(bool ok, const std::string& message) {
  if (!ok) throw ClusterError(message);
}

}  // namespace

std::optional<SlurmEnv> SlurmEnv::detect(const Environment& env) {
  auto job_id = env.get("SLURM_JOB_ID");
  if (!job_id) return std::nullopt;
  const std::string why = fmt::format("SLURM_JOB_ID={} says this is a SLURM job", *job_id);

  SlurmEnv s;
  s.job_id = *job_id;
  s.restart_count = optional_count(env, "SLURM_RESTART_COUNT", 0);
  // SLURM_NODELIST is the older name, still set by Slurm; prefer and ask for the current one.
  const std::string job_list_var =
      !env.has("SLURM_JOB_NODELIST") && env.has("SLURM_NODELIST") ? "SLURM_NODELIST" : "SLURM_JOB_NODELIST";
  s.job_nodes = node_list(job_list_var, require(env, job_list_var, why));

  s.in_step = env.has("SLURM_STEP_ID");
  std::string tasks_var;
  if (s.in_step) {
    const std::string step_why = fmt::format("SLURM_STEP_ID={} says this is a job step", *env.get("SLURM_STEP_ID"));
    s.nodes = node_list("SLURM_STEP_NODELIST", require(env, "SLURM_STEP_NODELIST", step_why));
    tasks_var = "SLURM_STEP_TASKS_PER_NODE";
    s.tasks_per_node = parse_tasks_per_node(require(env, tasks_var, step_why), tasks_var);
    s.num_tasks = parse_count("SLURM_STEP_NUM_TASKS", require(env, "SLURM_STEP_NUM_TASKS", step_why));
    s.proc_id = parse_count("SLURM_PROCID", require(env, "SLURM_PROCID", step_why));
    s.local_id = parse_count("SLURM_LOCALID", require(env, "SLURM_LOCALID", step_why));
    s.node_id = parse_count("SLURM_NODEID", require(env, "SLURM_NODEID", step_why));
  } else {
    s.nodes = s.job_nodes;
    tasks_var = "SLURM_TASKS_PER_NODE";
    if (auto tpn = env.get(tasks_var)) {
      s.tasks_per_node = parse_tasks_per_node(*tpn, tasks_var);
    } else {
      s.tasks_per_node.assign(s.nodes.size(), 1);
    }
    s.num_tasks = optional_count(env, "SLURM_NTASKS", task_total(s.tasks_per_node, tasks_var));
    s.proc_id = optional_count(env, "SLURM_PROCID", 0);
    s.local_id = optional_count(env, "SLURM_LOCALID", 0);
    s.node_id = optional_count(env, "SLURM_NODEID", 0);
  }

  const int total = task_total(s.tasks_per_node, tasks_var);
  check(s.tasks_per_node.size() == s.nodes.size(),
        fmt::format("{} lists {} nodes but the node list has {} ({})", tasks_var, s.tasks_per_node.size(),
                    s.nodes.size(), compress_hostlist(s.nodes)));
  check(s.num_tasks > 0, "the SLURM task count is 0");
  check(total == s.num_tasks,
        fmt::format("{} adds up to {} tasks but the task count is {}", tasks_var, total, s.num_tasks));
  check(s.proc_id < s.num_tasks, fmt::format("SLURM_PROCID={} is not below the task count {}", s.proc_id, s.num_tasks));
  check(s.node_id < static_cast<int>(s.nodes.size()),
        fmt::format("SLURM_NODEID={} is not below the node count {}", s.node_id, s.nodes.size()));
  check(s.local_id < s.tasks_per_node[static_cast<std::size_t>(s.node_id)],
        fmt::format("SLURM_LOCALID={} is not below the {} tasks {} gives node {}", s.local_id,
                    s.tasks_per_node[static_cast<std::size_t>(s.node_id)], tasks_var, s.node_id));
  return s;
}

Launcher detect_launcher(const Environment& env) {
  // Hydra exports MPI_LOCALNRANKS to every rank it starts; Slurm's PMI plugins do not.
  // Under a SLURM allocation Hydra starts its proxies with srun, so the processes
  // also see SLURM_STEP_* variables that describe the proxies, not the ranks.
  if (env.has("MPI_LOCALNRANKS") || env.has("HYDI_CONTROL_FD")) return Launcher::kMpiexec;
  if (env.has("SLURM_STEP_ID")) return Launcher::kSrun;
  return Launcher::kSingleton;
}

const char* to_string(Launcher launcher) {
  switch (launcher) {
    case Launcher::kSingleton: return "singleton";
    case Launcher::kMpiexec: return "mpiexec";
    case Launcher::kSrun: return "srun";
  }
  return "unknown";
}

}  // namespace hpctrain::cluster
