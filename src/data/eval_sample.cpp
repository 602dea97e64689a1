#include "data/eval_sample.h"

#include <fmt/format.h>

#include <stdexcept>

#include "data/sampler.h"

namespace hpctrain::data {

std::vector<std::uint64_t> spread_sample(std::uint64_t population, std::uint64_t count, std::uint64_t seed) {
  std::vector<std::uint64_t> out;
  if (count >= population) {
    out.reserve(population);
    for (std::uint64_t i = 0; i < population; ++i) out.push_back(i);
    return out;
  }
  if (count > kMaxEvalSample) {
    throw std::invalid_argument(fmt::format("an evaluation sample of {} sequences exceeds {}", count, kMaxEvalSample));
  }
  out.reserve(count);
  // A key of its own, so the sample shares no stream with the training order.
  const std::uint64_t key = mix64(seed ^ 0x5EED5A3F1E0DA7A5ULL);
  // Stratum k is [floor(k * population / count), floor((k + 1) * population / count)),
  // computed without forming k * population: q = population / count and
  // r = population % count < count <= kMaxEvalSample, so k * r < 2^62.
  const std::uint64_t q = population / count;
  const std::uint64_t r = population % count;
  auto start = [&](std::uint64_t k) { return k * q + k * r / count; };
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t lo = start(k);
    const std::uint64_t hi = start(k + 1);  // > lo: count < population
    out.push_back(lo + mix64(key + k) % (hi - lo));
  }
  return out;
}

}  // namespace hpctrain::data
