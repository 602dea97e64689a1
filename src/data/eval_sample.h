// Which validation sequences an evaluation reads. A sample of `count` of the
// split's `population` sequences, spread over the whole split: the split is
// cut into `count` equal strata (in shard order, i.e. corpus order) and one
// sequence is drawn from each, keyed by the seed. So no region of the corpus
// (its first documents, one large file) can dominate the estimate, and the
// sample depends only on (population, count, seed): the same at every
// evaluation of a run and at every world size.
#pragma once

#include <cstdint>
#include <vector>

namespace hpctrain::data {

// The largest sample: eval.samples is bounded by it.
constexpr std::uint64_t kMaxEvalSample = std::uint64_t{1} << 31;

// Ascending sample indices; every index of [0, population) when count >= population.
std::vector<std::uint64_t> spread_sample(std::uint64_t population, std::uint64_t count, std::uint64_t seed);

}  // namespace hpctrain::data
