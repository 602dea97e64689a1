// MLM masking: the 15% / 80-10-10 split over a large sample, specials untouched,
// and decisions that depend only on (seed, sample, position).
#include "data/mlm_masking.h"

#include <gtest/gtest.h>

namespace hpctrain::data {
namespace {

MlmMasking masking() {
  const config::DataConfig defaults;
  MlmMasking m;
  m.probability = defaults.mlm_probability;
  m.mask_fraction = defaults.mlm_mask_fraction;
  m.random_fraction = defaults.mlm_random_fraction;
  m.seed = 11;
  m.mask_id = 4;
  m.special.assign(1000, false);
  for (int id : {0, 1, 2, 3, 4}) m.special[static_cast<std::size_t>(id)] = true;
  return m;
}

TEST(MlmMasking, RatiosMatchTheConfigurationOverALargeSample) {
  const MlmMasking m = masking();
  const std::size_t n = 512;
  const int samples = 4000;  // ~2M tokens
  std::size_t tokens = 0, chosen = 0, masked = 0, replaced = 0, kept = 0, specials_touched = 0;
  for (int s = 0; s < samples; ++s) {
    std::vector<std::int64_t> t(n), labels(n);
    for (std::size_t i = 0; i < n; ++i) t[i] = static_cast<std::int64_t>((i * 7 + static_cast<std::size_t>(s)) % 1000);
    const auto original = t;
    mask_tokens(m, static_cast<std::uint64_t>(s), t.data(), labels.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const bool special = m.special[static_cast<std::size_t>(original[i])];
      if (special) {
        specials_touched += (t[i] != original[i] || labels[i] != kIgnoreLabel) ? 1 : 0;
        continue;
      }
      ++tokens;
      if (labels[i] == kIgnoreLabel) {
        ASSERT_EQ(t[i], original[i]);
        continue;
      }
      ASSERT_EQ(labels[i], original[i]);
      ++chosen;
      if (t[i] == m.mask_id) {
        ++masked;
      } else if (t[i] != original[i]) {
        ASSERT_FALSE(m.special[static_cast<std::size_t>(t[i])]) << "a special token was used as a replacement";
        ++replaced;
      } else {
        ++kept;
      }
    }
  }
  EXPECT_EQ(specials_touched, 0U);
  const double p = static_cast<double>(chosen) / static_cast<double>(tokens);
  EXPECT_NEAR(p, 0.15, 0.002);
  EXPECT_NEAR(static_cast<double>(masked) / static_cast<double>(chosen), 0.8, 0.005);
  // A random replacement equal to the original counts as kept: 1 in 995.
  EXPECT_NEAR(static_cast<double>(replaced) / static_cast<double>(chosen), 0.1 * (1 - 1.0 / 995), 0.004);
  EXPECT_NEAR(static_cast<double>(kept) / static_cast<double>(chosen), 0.1, 0.004);
}

TEST(MlmMasking, DependsOnlyOnSeedSampleAndPosition) {
  MlmMasking m = masking();
  std::vector<std::int64_t> a(300, 500), b(300, 500), la(300), lb(300);
  mask_tokens(m, 77, a.data(), la.data(), a.size());
  mask_tokens(m, 77, b.data(), lb.data(), b.size());
  EXPECT_EQ(a, b);
  EXPECT_EQ(la, lb);
  std::vector<std::int64_t> c(300, 500), lc(300);
  mask_tokens(m, 78, c.data(), lc.data(), c.size());
  EXPECT_NE(la, lc);
  m.seed = 12;
  std::vector<std::int64_t> d(300, 500), ld(300);
  mask_tokens(m, 77, d.data(), ld.data(), d.size());
  EXPECT_NE(la, ld);
}

}  // namespace
}  // namespace hpctrain::data
