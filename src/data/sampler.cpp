#include "data/sampler.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/data_error.h"

namespace hpctrain::data {

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

IndexPermutation::IndexPermutation(std::uint64_t n, std::uint64_t key) : n_(n) {
  // The smallest domain of 2 * half_bits bits that holds n; cycle walking then
  // stays below n, taking under four rounds trips on average.
  while (half_bits_ < 32 && (std::uint64_t{1} << (2 * half_bits_)) < n) ++half_bits_;
  half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  for (int r = 0; r < 4; ++r) keys_[r] = mix64(key + 0x632BE59BD9B4E019ULL * static_cast<std::uint64_t>(r + 1));
}

std::uint64_t IndexPermutation::feistel(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_;
  std::uint64_t right = x & half_mask_;
  for (const std::uint64_t k : keys_) {
    const std::uint64_t next = left ^ (mix64(right ^ k) & half_mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

std::uint64_t IndexPermutation::operator()(std::uint64_t index) const {
  std::uint64_t x = feistel(index);
  while (x >= n_) x = feistel(x);
  return x;
}

RankShare rank_share(std::uint64_t global_batch, int rank, int world) {
  const auto w = static_cast<std::uint64_t>(world);
  const auto r = static_cast<std::uint64_t>(rank);
  const std::uint64_t base = global_batch / w;
  const std::uint64_t extra = global_batch % w;
  return {r * base + std::min(r, extra), base + (r < extra ? 1 : 0)};
}

DistributedSampler::DistributedSampler(std::uint64_t samples, std::uint64_t global_batch, int rank, int world,
                                       std::uint64_t seed)
    : samples_(samples), global_batch_(global_batch), rank_(rank), world_(world), seed_(seed) {
  if (world < 1 || rank < 0 || rank >= world) throw DataError(fmt::format("sampler: rank {} of {}", rank, world));
  if (global_batch == 0) throw DataError("sampler: a global batch of 0 samples");
  if (samples < global_batch) {
    throw DataError(
        fmt::format("the split holds {} samples, fewer than one global batch of {}", samples, global_batch));
  }
}

std::vector<std::uint64_t> DistributedSampler::next() {
  if (state_.step == steps_per_epoch()) state_ = {state_.epoch + 1, 0};
  const IndexPermutation order(samples_, mix64(seed_) ^ mix64(state_.epoch + 1));
  const RankShare share = rank_share(global_batch_, rank_, world_);
  const std::uint64_t first = state_.step * global_batch_ + share.first;
  std::vector<std::uint64_t> out(share.count);
  for (std::uint64_t i = 0; i < share.count; ++i) out[i] = order(first + i);
  ++state_.step;
  return out;
}

void DistributedSampler::restore(const SamplerState& state) {
  if (state.step > steps_per_epoch()) {
    throw DataError(
        fmt::format("sampler state step {} is past the {} steps of an epoch", state.step, steps_per_epoch()));
  }
  state_ = state;
}

}  // namespace hpctrain::data
