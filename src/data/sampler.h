// The distributed sampler. Each epoch visits the samples in a pseudo-random
// order keyed by (seed, epoch); global batch s is positions [s*B, (s+1)*B) of that
// order, and rank r of W takes the r-th of its W consecutive slices (rank_share:
// B / W samples each, one more for the first B % W ranks, so any B suits any
// W). So ranks are disjoint, each epoch covers every sample at most once (the
// last partial batch is dropped), and for a fixed global batch B the global
// order is the same at any world size. The order is computed on demand (a keyed Feistel permutation),
// so memory does not grow with the data set. State is (epoch, step): exact to save.
#pragma once

#include <cstdint>
#include <vector>

namespace hpctrain::data {

// A keyed bijection of [0, n), evaluated per index.
class IndexPermutation {
 public:
  IndexPermutation(std::uint64_t n, std::uint64_t key);
  [[nodiscard]] std::uint64_t operator()(std::uint64_t index) const;

 private:
  [[nodiscard]] std::uint64_t feistel(std::uint64_t x) const;
  std::uint64_t n_;
  int half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
  std::uint64_t keys_[4] = {};
};

// splitmix64's finaliser: a fast, well-mixed 64-bit hash.
std::uint64_t mix64(std::uint64_t x);

struct SamplerState {
  std::uint64_t epoch = 0;
  std::uint64_t step = 0;  // global batches already taken in this epoch
  bool operator==(const SamplerState&) const = default;
};

// Rank `rank`'s slice of a global batch: positions [first, first + count) of it.
// With fewer samples than ranks the last ranks' count is 0.
struct RankShare {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
};
RankShare rank_share(std::uint64_t global_batch, int rank, int world);

class DistributedSampler {
 public:
  // Throws DataError if `global_batch` is 0, or the split holds fewer samples
  // than one global batch.
  DistributedSampler(std::uint64_t samples, std::uint64_t global_batch, int rank, int world, std::uint64_t seed);

  // This rank's rank_share of the next step's global batch, as sample indices.
  std::vector<std::uint64_t> next();

  [[nodiscard]] std::uint64_t steps_per_epoch() const { return samples_ / global_batch_; }
  [[nodiscard]] SamplerState state() const { return state_; }
  void restore(const SamplerState& state);

 private:
  std::uint64_t samples_;
  std::uint64_t global_batch_;
  int rank_;
  int world_;
  std::uint64_t seed_;
  SamplerState state_;
};

}  // namespace hpctrain::data
