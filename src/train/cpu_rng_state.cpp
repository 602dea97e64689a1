#include "train/cpu_rng_state.h"

#include <ATen/CPUGeneratorImpl.h>

#include <mutex>

namespace hpctrain::train {
namespace {

constexpr const char* kName = "rng/torch_cpu";

}  // namespace

void save_cpu_rng(ckpt::Snapshot& snapshot) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const std::lock_guard lock(generator.mutex());
  snapshot.tensors.emplace_back(kName, generator.get_state().clone());
}

void load_cpu_rng(const ckpt::CheckpointReader& checkpoint) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const std::lock_guard lock(generator.mutex());
  const at::Tensor now = generator.get_state();
  generator.set_state(checkpoint.tensor(kName, now.numel(), now.scalar_type()));
}

}  // namespace hpctrain::train
