#include "train/batch_geometry.h"

#include <fmt/format.h>

#include <stdexcept>

#include "data/sampler.h"

namespace hpctrain::train {

double BatchGeometry::loss_divisor(std::size_t m, bool summed_over_ranks) const {
  if (stands_in()) return 0;  // not used: a stand-in's loss is multiplied by 0
  // Divided, not multiplied by a reciprocal: for even shapes the quotient is
  // the whole number micro-steps x ranks that the loss was divided by before.
  const auto samples = static_cast<double>(summed_over_ranks ? global : local);
  return samples / static_cast<double>(micro.at(m));
}

double BatchGeometry::loss_weight() const {
  return static_cast<double>(local * static_cast<std::uint64_t>(world)) / static_cast<double>(global);
}

std::string BatchGeometry::describe() const {
  const std::uint64_t fewest = global / static_cast<std::uint64_t>(world);
  const std::uint64_t most = fewest + (global % static_cast<std::uint64_t>(world) == 0 ? 0 : 1);
  const std::string per_rank = fewest == most ? fmt::format("{}", most) : fmt::format("{} or {}", most, fewest);
  const std::size_t steps = micro.size();
  return fmt::format("{} per rank{}, micro-batches of up to {}: {} micro-step{} on this rank", per_rank,
                     fewest == 0 ? ", those without one standing in with weight 0" : "", micro_bound, steps,
                     steps == 1 ? "" : "s");
}

BatchGeometry batch_geometry(const config::Experiment& e, int rank, int world) {
  BatchGeometry g;
  g.global = static_cast<std::uint64_t>(e.training.batch_size);
  g.micro_bound = static_cast<std::size_t>(e.training.micro_batch_size);
  g.world = world;
  if (g.global < static_cast<std::uint64_t>(world) && e.parallel.reducer == config::ReducerKind::kDdap) {
    throw std::runtime_error(fmt::format(
        "{}: training.batch_size {} leaves {} of the {} ranks without a sample, and parallel.reducer = \"ddap\" trains "
        "a replica on each rank's own samples: set training.batch_size to at least {} (--set training.batch_size={}), "
        "or run {} ranks",
        e.path, g.global, static_cast<std::uint64_t>(world) - g.global, world, world, world, g.global));
  }
  g.local = data::rank_share(g.global, rank, world).count;
  if (g.stands_in()) {
    g.micro = {1};
    return g;
  }
  const std::uint64_t steps = (g.local + g.micro_bound - 1) / g.micro_bound;
  for (std::uint64_t m = 0; m < steps; ++m) {
    g.micro.push_back(static_cast<std::size_t>(g.local / steps + (m < g.local % steps ? 1 : 0)));
  }
  return g;
}

}  // namespace hpctrain::train
