#include "runtime/threads.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <torch/utils.h>

#include "cluster/parse_int.h"
#include "support/usable_cores.h"

#include <stdexcept>

namespace hpctrain::runtime {

ThreadPlan plan_threads(const cluster::Environment& env, int ranks_on_node) {
  if (auto cpus = env.get("SLURM_CPUS_PER_TASK")) {
    const auto n = cluster::parse_non_negative(*cpus);
    if (!n || *n < 1) {
      throw std::invalid_argument(fmt::format("SLURM_CPUS_PER_TASK='{}' is not a positive integer", *cpus));
    }
    return {*n, fmt::format("SLURM_CPUS_PER_TASK={}", *n)};
  }
  const int cores = support::usable_cores();
  const int ranks = std::max(1, ranks_on_node);
  return {std::max(1, cores / ranks),
          fmt::format("{} usable cores / {} rank{} on this node", cores, ranks, ranks == 1 ? "" : "s")};
}

void apply_threads(int threads) {
  torch::set_num_threads(threads);
  using SetThreads = void (*)(int);
  if (auto* set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(threads);
}

int torch_threads() { return torch::get_num_threads(); }

}  // namespace hpctrain::runtime
