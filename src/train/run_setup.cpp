#include "train/run_setup.h"

#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/types.h>

#include <chrono>
#include <cstdlib>
#include <vector>

#include "cluster/gpu_placement.h"
#include "cluster/nvidia_devices.h"
#include "comm/consensus.h"
#include "comm/mpi_communicator.h"
#include "data/data_error.h"
#include "data/prepare.h"
#include "runtime/libtorch_build.h"
#include "support/text.h"

namespace hpctrain::train {

runtime::ThreadPlan thread_plan(const config::Experiment& experiment, const cluster::Environment& env,
                                int ranks_on_node) {
  if (experiment.training.threads > 0) {
    return {static_cast<int>(experiment.training.threads), "training.threads"};
  }
  return runtime::plan_threads(env, ranks_on_node);
}

namespace {

torch::Device local_choice(config::Device requested, const comm::World& world) {
  const bool gpus = torch::cuda::is_available();
  switch (requested) {
    case config::Device::kCpu: return torch::kCPU;
    case config::Device::kCuda:
      if (!gpus) {
        throw std::runtime_error(
            "training.device = \"cuda\", but this hpctrain runs on a CPU-only LibTorch (or sees no GPU); build "
            "against a CUDA LibTorch via CMAKE_PREFIX_PATH, or use \"auto\" or \"cpu\"");
      }
      break;
    case config::Device::kAuto:
      if (!gpus) return torch::kCPU;
      break;
  }
  const int index = cluster::gpu_for_local_rank(world.gpu_placement(), static_cast<int>(torch::cuda::device_count()));
  return {torch::kCUDA, static_cast<torch::DeviceIndex>(index)};
}

}  // namespace

torch::Device choose_device(config::Device requested, comm::World& world) {
  // Agreed, so that a rank without its GPU stops every rank, not only itself.
  const torch::Device device = comm::on_all_ranks(world.comm(), [&] { return local_choice(requested, world); });
  // "auto" may find GPUs on some nodes only; the ranks would then wait in different collectives.
  const auto kinds = comm::allgather_strings(world.comm(), device.is_cuda() ? "cuda" : "cpu", 8);
  std::vector<int> on_cpu;
  for (int r = 0; r < world.size(); ++r) {
    if (kinds[static_cast<std::size_t>(r)] == "cpu") on_cpu.push_back(r);
  }
  if (!on_cpu.empty() && on_cpu.size() != kinds.size()) {
    throw comm::BootstrapError(fmt::format(
        "training.device = \"auto\" found GPUs on some ranks but none on rank{} {}: every rank must train on the "
        "same kind of device; run on GPU nodes only, or set training.device = \"cpu\"",
        on_cpu.size() == 1 ? "" : "s", comm::rank_ranges(on_cpu)));
  }
  return device;
}

std::string idle_gpus_warning(config::Device requested, const torch::Device& chosen, const std::filesystem::path& dev) {
  if (requested != config::Device::kAuto || chosen.is_cuda()) return {};
  const std::vector<std::string> gpus = cluster::nvidia_device_files(dev);
  if (gpus.empty()) return {};
  const runtime::LibTorchBuild torch = runtime::libtorch_build();
  const std::string why =
      torch.cuda
          ? fmt::format("LibTorch {} has CUDA but sees no GPU (the driver, or CUDA_VISIBLE_DEVICES)", torch.version)
          : fmt::format(
                "this hpctrain's LibTorch {} is CPU-only; build against a CUDA LibTorch "
                "(docs/bootstrap.md, \"Building for GPUs\")",
                torch.version);
  return fmt::format(
      "warning: training.device = \"auto\" trains on the CPUs, but this node has {} NVIDIA GPU{} ({}{}): {}. Set "
      "training.device = \"cpu\" to train on CPUs without this warning, or \"cuda\" to stop instead",
      gpus.size(), gpus.size() == 1 ? "" : "s", gpus.front(), gpus.size() == 1 ? "" : ", ...", why);
}

std::string make_gpu_deterministic() {
  at::globalContext().setDeterministicAlgorithms(true, /*warn_only=*/false);
  at::globalContext().setDeterministicCuDNN(true);
  at::globalContext().setBenchmarkCuDNN(false);
  // Read once, here, before any thread of ours or cuBLAS starts.
  const char* mine = std::getenv("CUBLAS_WORKSPACE_CONFIG");  // NOLINT(concurrency-mt-unsafe)
  std::string workspace = mine != nullptr ? std::string(mine) + " (set by you)" : std::string(":4096:8");
  if (mine == nullptr) setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", 1);  // NOLINT(concurrency-mt-unsafe)
  return fmt::format("GPU determinism: deterministic algorithms on, cuDNN autotuning off, CUBLAS_WORKSPACE_CONFIG={}",
                     workspace);
}

void ensure_prepared(const config::Experiment& e, comm::World& world, RunLog& log) {
  // The other ranks wait while rank 0 prepares, which takes seconds to
  // minutes: longer than parallel.collective_timeout_s allows a collective (a
  // preparation of over 300 s ended the job, naming rank 0 as missing). So the
  // wait has its own timeout, parallel.prepare_timeout_s, and sleeps between
  // two tests: a rank that polled took half of 2 cores from the tokenizer's
  // threads. A failed preparation ends every rank at once with rank 0's
  // reason (on_all_ranks); a rank 0 that dies or hangs ends the job at the
  // timeout.
  comm::MpiCommunicator waiting(world.mpi_comm(),
                                std::chrono::milliseconds(static_cast<long long>(e.parallel.prepare_timeout_s * 1e3)),
                                comm::WaitStrategy::kSleep);
  // A prepared data set is checked against [data] as `hpctrain prepare`
  // checks it. One prepared from other settings or sources is refused, not
  // prepared again inside the job: data.dir may be shared with other runs
  // (a sweep's array tasks) that read it now, and a retrained tokenizer would
  // leave this run's checkpoints unable to resume.
  comm::on_all_ranks(waiting, [&] {
    if (world.rank() != 0) return;
    const std::filesystem::path dir = e.data.dir;
    if (!std::filesystem::exists(dir / "meta.json")) {
      log.line(
          fmt::format("data set {} not prepared yet: preparing it (hpctrain prepare does this alone)", e.data.dir));
      log.line(support::printable(data::summary_line(data::prepare(e, stdout))));
      return;
    }
    std::string expected;
    try {
      expected = data::expected_fingerprint(e);
    } catch (const std::exception& error) {
      // Sources a login node saw and this node does not: the data set stands.
      log.line(support::printable(fmt::format(
          "data set {}: cannot check it against [data] ({}); training on it as prepared", e.data.dir, error.what())));
      return;
    }
    if (data::stored_fingerprint(dir) != expected) {
      throw data::DataError(
          fmt::format("data.dir = {} was prepared from other [data] settings or sources than {} names (its fingerprint "
                      "differs): prepare it again with `hpctrain prepare {}`, or give this run a data.dir of its own",
                      e.data.dir, e.path, e.path));
    }
  });
}

}  // namespace hpctrain::train
