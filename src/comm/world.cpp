#include "comm/world.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "cluster/error.h"
#include "comm/consensus.h"
#include "comm/mpi_communicator.h"

namespace hpctrain::comm {
namespace {

std::string local_hostname() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name) != 0) throw cluster::ClusterError("gethostname failed");
  return name;
}

}  // namespace

World::World(const handles::MpiRuntime& runtime, const cluster::Environment& env, const WorldOptions& options)
    : thread_level_(runtime.thread_level()), timeout_(options.collective_timeout), wait_(options.wait) {
  // A silent singleton launch must stop before the first collective, which would
  // otherwise "succeed" on a world of one.
  check_launch(env);
  comm_ = std::make_unique<MpiCommunicator>(MPI_COMM_WORLD, timeout_, wait_);
  find_local_rank();
  hosts_ = allgather_strings(*comm_, local_hostname(), HOST_NAME_MAX + 1);
  // Which GPUs each rank may see: whether a node's ranks share one view.
  cuda_visible_devices_ = allgather_strings(*comm_, env.get("CUDA_VISIBLE_DEVICES").value_or(""), 1024);
  find_head_node();
  choose_interface(env);
}

World::~World() = default;

cluster::GpuPlacement World::gpu_placement() const {
  const auto me = static_cast<std::size_t>(rank());
  return {hosts_[me], local_rank_, local_size_, cuda_visible_devices_[me],
          cluster::devices_bound_per_rank(hosts_, cuda_visible_devices_, hosts_[me])};
}

void World::check_launch(const cluster::Environment& env) {
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  launcher_ = cluster::detect_launcher(env);
  slurm_ = cluster::SlurmEnv::detect(env);
  if (launcher_ != cluster::Launcher::kSrun) return;

  // Under srun every task must be one rank of a single MPI job.
  const cluster::SlurmEnv& s = *slurm_;
  if (size != s.num_tasks) {
    throw BootstrapError(fmt::format(
        "MPI world size is {} but SLURM_STEP_NUM_TASKS={}: srun started {} separate MPI jobs instead of one. "
        "MPICH needs Slurm's PMI: launch with `srun --mpi=pmi2` (or set MpiDefault=pmi2 in slurm.conf)",
        size, s.num_tasks, size == 1 ? std::to_string(s.num_tasks) : "several"));
  }
  if (rank != s.proc_id) {
    throw BootstrapError(
        fmt::format("MPI rank {} differs from SLURM_PROCID={}: the MPI library and srun disagree "
                    "on task placement",
                    rank, s.proc_id));
  }
}

void World::find_local_rank() {
  on_all_ranks(*comm_, [&] {
    const handles::MpiComm local = handles::MpiComm::split_shared(MPI_COMM_WORLD);
    local_rank_ = local.rank();
    local_size_ = local.size();
    if (launcher_ == cluster::Launcher::kSrun && slurm_->local_id != local_rank_) {
      throw BootstrapError(
          fmt::format("node-local rank {} (from MPI shared-memory splitting) differs from "
                      "SLURM_LOCALID={}",
                      local_rank_, slurm_->local_id));
    }
  });
}

void World::find_head_node() {
  // Under srun the head is the step's first node, where Slurm places task 0;
  // otherwise it is simply rank 0's host.
  std::string host = hosts_.front();
  std::string source = "rank 0's hostname";
  if (launcher_ == cluster::Launcher::kSrun) {
    host = slurm_->head_node();
    source = slurm_->nodes == slurm_->job_nodes ? "SLURM_JOB_NODELIST" : "SLURM_STEP_NODELIST";
  }

  // Each rank resolves the name itself. The head node may map its own name to
  // loopback (Debian's 127.0.1.1) while the others see its routable address, so
  // all ranks adopt the lowest rank's routable answer.
  const std::string mine =
      on_all_ranks(*comm_, [&] { return cluster::resolve_head_node(host, source).address.to_string(); });
  const auto answers = allgather_strings(*comm_, mine, 64);
  std::string chosen = answers.front();
  for (const auto& a : answers) {
    if (!cluster::IpAddress::parse(a).is_loopback()) {
      chosen = a;
      break;
    }
  }
  head_ = cluster::HeadNode{host, source, cluster::IpAddress::parse(chosen)};
  const bool multi_host = std::any_of(hosts_.begin(), hosts_.end(), [&](const auto& h) { return h != hosts_[0]; });
  if (head_.address.is_loopback() && multi_host) {
    throw BootstrapError(
        fmt::format("head node '{}' (from {}) resolves only to loopback {} on every node, but the "
                    "ranks span several hosts; fix its entry in /etc/hosts or DNS",
                    host, source, chosen));
  }
}

void World::choose_interface(const cluster::Environment& env) {
  on_all_ranks(*comm_, [&] {
    const cluster::IpAddress source = cluster::route_source(head_.address);
    interface_ =
        cluster::choose_interface(head_.address, source, cluster::list_interfaces(), env.get("NCCL_SOCKET_IFNAME"));
  });
  // Bootstrap runs before any thread of ours exists, so setenv cannot race.
  if (!interface_.user_set) {
    setenv("NCCL_SOCKET_IFNAME", cluster::nccl_socket_ifname(interface_).c_str(), 1);  // NOLINT(concurrency-mt-unsafe)
  }
}

}  // namespace hpctrain::comm
