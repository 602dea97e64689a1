// The distributed sampler: disjoint, covering, world-size independent, resumable.
#include "data/sampler.h"

#include <gtest/gtest.h>

#include <set>

#include "data/data_error.h"

namespace hpctrain::data {
namespace {

// The global order of `steps` steps, gathered from every rank's share.
std::vector<std::uint64_t> global_order(std::uint64_t samples, std::uint64_t batch, int world, int steps) {
  std::vector<DistributedSampler> ranks;
  ranks.reserve(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r) ranks.emplace_back(samples, batch, r, world, 42);
  std::vector<std::uint64_t> order;
  for (int s = 0; s < steps; ++s) {
    for (auto& rank : ranks) {
      const auto part = rank.next();
      order.insert(order.end(), part.begin(), part.end());
    }
  }
  return order;
}

TEST(IndexPermutation, IsABijectionForAnySize) {
  for (std::uint64_t n : {1ULL, 2ULL, 3ULL, 7ULL, 64ULL, 1000ULL, 4097ULL}) {
    const IndexPermutation p(n, 7);
    std::set<std::uint64_t> seen;
    for (std::uint64_t i = 0; i < n; ++i) seen.insert(p(i));
    EXPECT_EQ(seen.size(), n);
    EXPECT_LT(*seen.rbegin(), n);
  }
}

TEST(DistributedSampler, RanksAreDisjointAndAnEpochCoversEverySampleOnce) {
  const std::uint64_t samples = 1000;
  const std::uint64_t batch = 64;
  const int steps = static_cast<int>(samples / batch);  // 15 full batches; 40 samples dropped
  const auto order = global_order(samples, batch, 4, steps);
  const std::set<std::uint64_t> distinct(order.begin(), order.end());
  EXPECT_EQ(order.size(), steps * batch);
  EXPECT_EQ(distinct.size(), order.size());
  EXPECT_LT(*distinct.rbegin(), samples);
}

TEST(DistributedSampler, GlobalOrderIsTheSameAtWorldSizes1To8) {
  const auto one = global_order(5000, 48, 1, 250);  // 250 steps: across 2+ epochs
  EXPECT_EQ(global_order(5000, 48, 2, 250), one);
  EXPECT_EQ(global_order(5000, 48, 4, 250), one);
  // 48 over 5 and 7 ranks does not divide: the shares differ by one sample.
  EXPECT_EQ(global_order(5000, 48, 5, 250), one);
  EXPECT_EQ(global_order(5000, 48, 7, 250), one);
  // More ranks than samples: the last ranks take none.
  EXPECT_EQ(global_order(5000, 6, 8, 50), global_order(5000, 6, 1, 50));
}

TEST(RankShare, SplitsAnyBatchOverAnyWorldWithSharesOneApart) {
  for (std::uint64_t batch : {1ULL, 7ULL, 16ULL, 100ULL}) {
    for (int world : {1, 2, 3, 4, 8, 64}) {
      std::uint64_t next = 0;
      for (int r = 0; r < world; ++r) {
        const RankShare share = rank_share(batch, r, world);
        EXPECT_EQ(share.first, next) << batch << " over " << world << ", rank " << r;
        EXPECT_GE(share.count, batch / static_cast<std::uint64_t>(world));
        EXPECT_LE(share.count, batch / static_cast<std::uint64_t>(world) + 1);
        next += share.count;
      }
      EXPECT_EQ(next, batch) << batch << " over " << world;
    }
  }
  EXPECT_EQ(rank_share(16, 0, 3).count, 6U);
  EXPECT_EQ(rank_share(16, 2, 3).first, 11U);
}

TEST(DistributedSampler, EachEpochHasItsOwnOrder) {
  DistributedSampler s(100, 100, 0, 1, 3);
  const auto first = s.next();
  const auto second = s.next();
  EXPECT_EQ(s.state().epoch, 1U);
  EXPECT_NE(first, second);
  EXPECT_EQ(std::set<std::uint64_t>(second.begin(), second.end()).size(), 100U);
}

TEST(DistributedSampler, ResumesExactlyMidEpoch) {
  DistributedSampler straight(1000, 32, 1, 2, 9);
  for (int i = 0; i < 7; ++i) straight.next();
  const SamplerState saved = straight.state();
  std::vector<std::vector<std::uint64_t>> expected;
  expected.reserve(40);
  for (int i = 0; i < 40; ++i) expected.push_back(straight.next());  // crosses into the next epoch

  DistributedSampler resumed(1000, 32, 1, 2, 9);
  resumed.restore(saved);
  for (const auto& batch : expected) EXPECT_EQ(resumed.next(), batch);
  EXPECT_EQ(resumed.state(), straight.state());
}

TEST(DistributedSampler, RejectsImpossibleShapes) {
  EXPECT_THROW(DistributedSampler(100, 0, 0, 3, 1), DataError);  // an empty batch
  EXPECT_THROW(DistributedSampler(5, 8, 0, 1, 1), DataError);    // less than one batch
  DistributedSampler s(100, 10, 0, 1, 1);
  EXPECT_THROW(s.restore({0, 11}), DataError);
}

}  // namespace
}  // namespace hpctrain::data
