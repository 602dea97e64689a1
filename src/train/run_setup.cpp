#include "train/run_setup.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include "data/prepare.h"

namespace hpctrain::train {

runtime::ThreadPlan thread_plan(const config::Experiment& experiment, const cluster::Environment& env,
                                int ranks_on_node) {
  if (experiment.training.threads > 0) {
    return {static_cast<int>(experiment.training.threads), "training.threads"};
  }
  return runtime::plan_threads(env, ranks_on_node);
}

torch::Device choose_device(config::Device requested, int local_rank) {
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
  const auto count = static_cast<int>(torch::cuda::device_count());
  return {torch::kCUDA, static_cast<torch::DeviceIndex>(local_rank % count)};
}

BatchGeometry batch_geometry(const config::Experiment& e, int ranks) {
  const auto global = static_cast<std::uint64_t>(e.training.batch_size);
  const auto world = static_cast<std::uint64_t>(ranks);
  const auto micro = static_cast<std::uint64_t>(e.training.micro_batch_size);
  if (global % world != 0 || (global / world) % micro != 0) {
    throw std::runtime_error(
        fmt::format("{}: training.batch_size {} must be a multiple of training.micro_batch_size {} times the {} rank{}",
                    e.path, global, micro, ranks, ranks == 1 ? "" : "s"));
  }
  return {global, static_cast<std::size_t>(micro), static_cast<std::size_t>(global / world / micro)};
}

void ensure_prepared(const config::Experiment& e, comm::World& world, RunLog& log) {
  if (world.rank() == 0 && !std::filesystem::exists(std::filesystem::path(e.data.dir) / "meta.json")) {
    log.line(fmt::format("data set {} not prepared yet: preparing it (hpctrain prepare does this alone)", e.data.dir));
    const auto result = data::prepare(e, stdout);
    data::print_stats(result, stdout);
  }
  world.comm().barrier();
}

}  // namespace hpctrain::train
