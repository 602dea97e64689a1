#include "comm/dtype.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace hpctrain::comm {
namespace {

TEST(DType, Bf16RoundsToNearestEven) {
  EXPECT_EQ(float_to_bf16(1.0F), 0x3F80);
  EXPECT_EQ(bf16_to_float(0x3F80), 1.0F);
  EXPECT_EQ(float_to_bf16(1.0F + std::ldexp(1.0F, -8)), 0x3F80);      // tie: stays even
  EXPECT_EQ(float_to_bf16(1.0F + 3 * std::ldexp(1.0F, -8)), 0x3F82);  // tie: rounds up to even
  EXPECT_EQ(float_to_bf16(-2.5F), 0xC020);
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
}

TEST(DType, Fp16MatchesIeeeHalf) {
  EXPECT_EQ(float_to_half(1.0F), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0F), 0xC000);
  EXPECT_EQ(float_to_half(65504.0F), 0x7BFF);
  EXPECT_EQ(float_to_half(65520.0F), 0x7C00);                      // overflows to inf
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0F, -26)), 0x0000);         // underflows to zero
  EXPECT_EQ(float_to_half(1.0F + std::ldexp(1.0F, -11)), 0x3C00);  // tie: stays even
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0F);
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0F, -24));
  EXPECT_TRUE(std::isinf(half_to_float(0x7C00)));
  for (std::uint32_t h = 0; h < 0x7C00; ++h) {  // every finite half survives the round trip
    ASSERT_EQ(float_to_half(half_to_float(static_cast<std::uint16_t>(h))), h);
  }
}

TEST(DType, DivideInPlace) {
  float f[2] = {3.0F, -6.0F};
  divide_in_place(f, 2, DType::kFloat32, 3);
  EXPECT_EQ(f[0], 1.0F);
  EXPECT_EQ(f[1], -2.0F);
  std::int64_t i[2] = {7, -7};
  divide_in_place(i, 2, DType::kInt64, 2);
  EXPECT_EQ(i[0], 3);
  EXPECT_EQ(i[1], -3);
  std::uint16_t b = float_to_bf16(6.0F);
  divide_in_place(&b, 1, DType::kBFloat16, 4);
  EXPECT_EQ(bf16_to_float(b), 1.5F);
}

}  // namespace
}  // namespace hpctrain::comm
