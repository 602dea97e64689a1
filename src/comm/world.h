// Bootstrapping a run: MPI start-up, rank and local-rank discovery, the checks
// that catch broken launches, the head node and the network interface to it.
// Works as a singleton, under mpiexec, and under srun (docs/bootstrap.md).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/environment.h"
#include "cluster/gpu_placement.h"
#include "cluster/head_node.h"
#include "cluster/network_interface.h"
#include "cluster/slurm_env.h"
#include "comm/communicator.h"
#include "comm/mpi_communicator.h"
#include "handles/mpi.h"

namespace hpctrain::comm {

struct WorldOptions {
  std::chrono::milliseconds collective_timeout{std::chrono::minutes(5)};
  WaitStrategy wait = kDefaultWaitStrategy;
};

class World {
 public:
  // Resolves everything below over the running MPI. Any rank's failure throws the
  // same BootstrapError on every rank. Sets NCCL_SOCKET_IFNAME unless the user did.
  World(const handles::MpiRuntime& runtime, const cluster::Environment& env, const WorldOptions& options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  [[nodiscard]] int rank() const { return comm_->rank(); }
  [[nodiscard]] int size() const { return comm_->size(); }
  [[nodiscard]] int local_rank() const { return local_rank_; }
  [[nodiscard]] int local_size() const { return local_size_; }
  [[nodiscard]] cluster::Launcher launcher() const { return launcher_; }
  [[nodiscard]] const std::optional<cluster::SlurmEnv>& slurm() const { return slurm_; }
  [[nodiscard]] const std::vector<std::string>& hosts() const { return hosts_; }  // per rank
  // This rank's node, local rank and view of the node's GPUs, for choosing its GPU.
  [[nodiscard]] cluster::GpuPlacement gpu_placement() const;
  [[nodiscard]] const cluster::HeadNode& head() const { return head_; }
  [[nodiscard]] const cluster::InterfaceChoice& interface() const { return interface_; }
  [[nodiscard]] int mpi_thread_level() const { return thread_level_; }
  [[nodiscard]] std::chrono::milliseconds collective_timeout() const { return timeout_; }
  // How the world's MPI communicators wait; every communicator made for this run uses it.
  [[nodiscard]] WaitStrategy wait_strategy() const { return wait_; }

  // The world's CPU communicator (MPI backend).
  [[nodiscard]] Communicator& comm() { return *comm_; }
  [[nodiscard]] const Communicator& comm() const { return *comm_; }
  // The world's MPI communicator, for backends built over MPI.
  [[nodiscard]] MPI_Comm mpi_comm() const { return MPI_COMM_WORLD; }

 private:
  void check_launch(const cluster::Environment& env);
  void find_local_rank();
  void find_head_node();
  void choose_interface(const cluster::Environment& env);

  int thread_level_;
  std::chrono::milliseconds timeout_;
  WaitStrategy wait_;
  std::unique_ptr<Communicator> comm_;
  int local_rank_ = 0;
  int local_size_ = 1;
  cluster::Launcher launcher_ = cluster::Launcher::kSingleton;
  std::optional<cluster::SlurmEnv> slurm_;
  std::vector<std::string> hosts_;
  std::vector<std::string> cuda_visible_devices_;  // per rank
  cluster::HeadNode head_;
  cluster::InterfaceChoice interface_;
};

}  // namespace hpctrain::comm
