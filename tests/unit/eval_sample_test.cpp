// The evaluation sample (data/eval_sample.h): one sequence from each of
// `count` equal strata of the split, keyed by the seed; every sequence when
// the split has no more than `count`.
#include "data/eval_sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace hpctrain::data {
namespace {

TEST(SpreadSample, OneSequenceFromEachEqualStratumInOrder) {
  for (const std::uint64_t population : {10ULL, 609ULL, 1000ULL, 4877ULL, 1ULL << 40}) {
    for (const std::uint64_t count : {1ULL, 7ULL, 9ULL, 512ULL}) {
      if (count >= population) continue;
      const auto sample = spread_sample(population, count, 1234);
      ASSERT_EQ(sample.size(), count);
      for (std::uint64_t k = 0; k < count; ++k) {
        // Stratum k: [k * population / count, (k + 1) * population / count)
        // (no wrap here: count <= 512 and population <= 2^40).
        EXPECT_GE(sample[k], k * population / count) << population << " " << count << " " << k;
        EXPECT_LT(sample[k], (k + 1) * population / count) << population << " " << count << " " << k;
      }
      EXPECT_TRUE(std::is_sorted(sample.begin(), sample.end()));
      EXPECT_EQ(std::adjacent_find(sample.begin(), sample.end()), sample.end());
    }
  }
}

TEST(SpreadSample, DependsOnTheSeedOnlyAndIsNotThePrefix) {
  const auto a = spread_sample(609, 64, 1234);
  EXPECT_EQ(spread_sample(609, 64, 1234), a);
  EXPECT_NE(spread_sample(609, 64, 4321), a);
  EXPECT_GT(a.back(), 600U * 62 / 64);  // reaches the end of the split
  // Not every sequence at a stratum's start: the draw varies inside strata.
  std::size_t at_start = 0;
  for (std::uint64_t k = 0; k < 64; ++k) at_start += a[k] == k * 609 / 64 ? 1 : 0;
  EXPECT_LT(at_start, 32U);
}

TEST(SpreadSample, TheWholeSplitWhenItHasNoMoreThanTheSample) {
  EXPECT_EQ(spread_sample(5, 5, 1), (std::vector<std::uint64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(spread_sample(3, 512, 1), (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_TRUE(spread_sample(0, 512, 1).empty());
  EXPECT_THROW((void)spread_sample(std::uint64_t{1} << 40, kMaxEvalSample + 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace hpctrain::data
