// e^v in plain float arithmetic that GCC vectorizes, for the element-wise
// kernels built per instruction set (GELU, the loss's softmax).
#pragma once

#include <cstdint>
#include <cstring>

namespace hpctrain::model {

// e^v, within 1.2 ulp on [-87, 88]: e^v = 2^n e^r with n = round(v / ln 2) and
// |r| <= ln(2)/2, where a degree-7 Taylor polynomial is exact to 6e-9. The
// clamp keeps 2^n a normal float: outside it the result saturates (about
// 1.6e-38 below, 1.7e38 above), which GELU and a softmax can afford. NaN passes.
// Branch-free so that loops over it vectorize.
inline float exp_clamped(float v) {
  constexpr float kLog2e = 1.4426950408889634F;
  constexpr float kLn2High = 0.693145751953125F;  // few mantissa bits: n * kLn2High is exact
  constexpr float kLn2Low = 1.428606765330187e-06F;
  constexpr float kRound = 12582912.0F;  // 1.5 * 2^23: adding it rounds to an integer
  v = v < -87.0F ? -87.0F : v;           // not std::clamp, whose branches stop vectorization
  v = v > 88.0F ? 88.0F : v;
  const float n = (v * kLog2e + kRound) - kRound;
  const float r = (v - n * kLn2High) - n * kLn2Low;
  float p = 1.0F / 5040;
  p = p * r + 1.0F / 720;
  p = p * r + 1.0F / 120;
  p = p * r + 1.0F / 24;
  p = p * r + 1.0F / 6;
  p = p * r + 0.5F;
  p = p * r + 1.0F;
  p = p * r + 1.0F;
  const std::int32_t exponent = (static_cast<std::int32_t>(n) + 127) << 23;
  float two_to_n = 0;
  std::memcpy(&two_to_n, &exponent, sizeof two_to_n);
  return p * two_to_n;
}

}  // namespace hpctrain::model
