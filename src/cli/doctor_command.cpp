#include "cli/doctor_command.h"

#include <fmt/format.h>

#include <set>

#include "cli/agreed_failure.h"
#include "cluster/environment.h"
#include "cluster/hostlist.h"
#include "cluster/network_interface.h"
#include "comm/allreduce_bandwidth.h"
#include "comm/consensus.h"
#include "comm/world.h"
#ifdef HPCTRAIN_HAVE_NCCL
#include "comm/cuda_bandwidth_buffer.h"
#include "comm/nccl_communicator.h"
#endif
#include "model/model_bytes.h"
#include "runtime/blas.h"
#include "runtime/openblas_kernels.h"
#include "runtime/threads.h"
#include "train/preemption.h"

namespace hpctrain::cli {
namespace {

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    default: return "unknown";
  }
}

// One machine-readable line per rank: the cluster tests parse these.
std::string rank_line(const comm::World& world) {
  const auto& iface = world.interface();
  const std::string iface_addr =
      iface.address ? fmt::format("{}/{}", iface.address->address.to_string(), iface.address->prefix_len) : "-";
  const std::string slurm_tasks = world.slurm() ? std::to_string(world.slurm()->num_tasks) : "-";
  return fmt::format(
      "rank={} world={} slurm_tasks={} local={}/{} host={} head={} head_addr={} iface={} iface_addr={} reason=\"{}\"",
      world.rank(), world.size(), slurm_tasks, world.local_rank(), world.local_size(),
      world.hosts()[static_cast<std::size_t>(world.rank())], world.head().host, world.head().address.to_string(),
      iface.name, iface_addr, iface.reason);
}

void print_summary(const comm::World& world, const runtime::ThreadPlan& plan, const runtime::BlasInfo& blas) {
  const std::set<std::string> distinct(world.hosts().begin(), world.hosts().end());
  fmt::print("hpctrain doctor\n");
  std::string launcher = cluster::to_string(world.launcher());
  if (const auto& s = world.slurm()) {
    launcher += fmt::format(" (SLURM job {}, {} task{} on {}, restart {})", s->job_id, s->num_tasks,
                            s->num_tasks == 1 ? "" : "s", cluster::compress_hostlist(s->nodes), s->restart_count);
  }
  fmt::print("  launcher   {}\n", launcher);
  fmt::print("  ranks      {} on {} host{}\n", world.size(), distinct.size(), distinct.size() == 1 ? "" : "s");
  fmt::print("  head node  {} ({}) at {}\n", world.head().host, world.head().source, world.head().address.to_string());
  fmt::print("  interface  rank 0: {} (NCCL_SOCKET_IFNAME={}): {}\n", world.interface().name,
             cluster::nccl_socket_ifname(world.interface()), world.interface().reason);
  fmt::print("  backend    mpi ({}), thread level {}, collective timeout {} s, wait: {}\n",
             handles::MpiRuntime::library_version(), thread_level_name(world.mpi_thread_level()),
             std::chrono::duration_cast<std::chrono::seconds>(world.collective_timeout()).count(),
             world.comm().wait_strategy());
  fmt::print("  threads    torch {}, OpenBLAS {} ({})\n", runtime::torch_threads(), blas.threads, plan.source);
  fmt::print("  BLAS       {}{}\n", blas.library, blas.openblas ? fmt::format(" ({})", blas.config) : "");
  if (blas.openblas) fmt::print("  kernels    {}\n", runtime::openblas_kernels_note(cluster::Environment::current()));
  if (!blas.openblas)
    fmt::print("  WARNING    LibTorch is not on OpenBLAS: expect ~30x slower matmuls (run env/setup.sh)\n");
}

void print_bandwidth(const std::vector<comm::BandwidthRow>& rows, int ranks, const char* backend) {
  fmt::print("\n# allreduce over {}, fp32 sum, in place, {} rank{}; time = mean per op on the slowest rank\n", backend,
             ranks, ranks == 1 ? "" : "s");
  fmt::print("# algbw = size / time; busbw = algbw * 2(n-1)/n (nccl-tests definitions); GB/s = 1e9 B/s\n");
  fmt::print("#{:>11} {:>10} {:>6} {:>11} {:>10} {:>10} {:>7}\n", "size(B)", "count", "iters", "time(us)", "algbw",
             "busbw", "#wrong");
  for (const auto& r : rows) {
    fmt::print(" {:>11} {:>10} {:>6} {:>11.1f} {:>10.3f} {:>10.3f} {:>7}\n", r.bytes, r.count, r.iterations,
               r.seconds * 1e6, r.algbw, r.busbw, r.wrong);
  }
}

// Each rank verified its own copy of every result: any wrong element stops every rank.
void agree_all_right(comm::World& world, const std::vector<comm::BandwidthRow>& rows, const char* backend) {
  comm::on_all_ranks(world.comm(), [&] {
    std::size_t wrong = 0;
    for (const auto& r : rows) wrong += r.wrong;
    if (wrong != 0)
      throw comm::BootstrapError(fmt::format("allreduce over {} produced {} wrong elements", backend, wrong));
  });
}

// The NCCL section: built exactly as training builds its communicator, so a
// node whose GPUs or libraries are missing fails here the same way.
void check_nccl(comm::World& world, const DoctorOptions& options) {
#ifdef HPCTRAIN_HAVE_NCCL
  comm::NcclCommunicator nccl(world);
  const auto devices = comm::allgather_strings(
      world.comm(), fmt::format("{}:{}", world.hosts()[static_cast<std::size_t>(world.rank())], nccl.cuda_device()),
      512);
  if (world.rank() == 0) {
    fmt::print("\n  nccl       {}\n", handles::describe(*nccl.api()));
    for (int r = 0; r < world.size(); ++r)
      fmt::print("  gpu        rank {}: {}\n", r, devices[static_cast<std::size_t>(r)]);
    (void)std::fflush(stdout);
  }
  if (!options.bandwidth) return;
  const auto buffer = comm::cuda_bandwidth_buffer(nccl.api(), options.max_bytes);
  const auto rows = comm::measure_allreduce(nccl, *buffer, options.min_bytes, options.max_bytes);
  if (world.rank() == 0) print_bandwidth(rows, world.size(), "nccl");
  agree_all_right(world, rows, "NCCL");
#else
  (void)world;
  (void)options;
  throw comm::BootstrapError(
      "--nccl: this hpctrain was built without the NCCL backend (CUDA and NCCL were not found, or "
      "-DHPCTRAIN_WITH_NCCL=OFF)");
#endif
}

}  // namespace

void run_doctor(const DoctorOptions& options) {
  // The bandwidth buffers are allocated whole: refuse a size the machine cannot hold before MPI starts.
  if (const double memory = model::physical_memory_bytes();
      options.bandwidth && memory > 0 && static_cast<double>(options.max_bytes) > memory / 4) {
    throw std::runtime_error(
        fmt::format("doctor --max-bytes {}: more than a quarter of this machine's {:.1f} GB of "
                    "memory, which the allreduce buffers would need",
                    options.max_bytes, memory / 1e9));
  }
  const auto env = cluster::Environment::current();
  handles::MpiRuntime mpi;
  // A signal in a batch job ends the check with exit 75, never a hang in
  // MPICH's own SIGUSR1 handler.
  train::exit_on_any_preemption_signal();
  finalize_after_agreed_failure(mpi, [&] {
    comm::World world(mpi, env, comm::WorldOptions{options.collective_timeout, options.wait});

    const runtime::ThreadPlan plan = runtime::plan_threads(env, world.local_size());
    runtime::apply_threads(plan.threads);
    const runtime::BlasInfo blas = runtime::describe_blas();

    const auto lines = comm::allgather_strings(world.comm(), rank_line(world), 2048);
    if (world.rank() == 0) {
      print_summary(world, plan, blas);
      fmt::print("\n");
      for (const auto& line : lines) fmt::print("{}\n", line);
      (void)std::fflush(stdout);
    }
    if (options.bandwidth) {
      const auto buffer = comm::host_bandwidth_buffer(options.max_bytes);
      const auto rows = comm::measure_allreduce(world.comm(), *buffer, options.min_bytes, options.max_bytes);
      if (world.rank() == 0) print_bandwidth(rows, world.size(), "mpi");
      agree_all_right(world, rows, "MPI");
    }
    if (options.nccl) check_nccl(world, options);
    world.comm().barrier();
  });
}

}  // namespace hpctrain::cli
