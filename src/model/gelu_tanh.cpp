#include "model/gelu_tanh.h"

#include <ATen/Parallel.h>
#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <cstdint>
#include <cstring>

namespace hpctrain::model {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654F;
constexpr float kCubic = 0.044715F;
constexpr std::int64_t kGrain = 16384;

// e^v, within 1.2 ulp on [-87, 88]: e^v = 2^n e^r with n = round(v / ln 2) and
// |r| <= ln(2)/2, where a degree-7 Taylor polynomial is exact to 6e-9. The
// clamp keeps 2^n a normal float; GELU only needs e^v to saturate there.
// Branch-free so that the loops below vectorize.
inline float exp_clamped(float v) {
  constexpr float kLog2e = 1.4426950408889634F;
  constexpr float kLn2High = 0.693145751953125F;  // few mantissa bits: n * kLn2High is exact
  constexpr float kLn2Low = 1.428606765330187e-06F;
  constexpr float kRound = 12582912.0F;  // 1.5 * 2^23: adding it rounds to an integer
  v = v < -87.0F ? -87.0F : v;           // not std::clamp, whose branches stop vectorization; NaN passes
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

// e^(-2u): sigmoid(2u) = 1 / (1 + e^(-2u)).
inline float exp_minus_2u(float x) { return exp_clamped(-2.0F * kSqrt2OverPi * (x + kCubic * x * x * x)); }

// Compiled for AVX-512, AVX2 and plain x86-64, picked when the program loads
// (the build targets plain x86-64). Contraction into FMAs is off for this file
// (CMakeLists.txt), so every variant gives the same bits.
__attribute__((target_clones("avx512f", "avx2", "default"))) void forward_kernel(const float* x, float* y,
                                                                                 std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) y[i] = x[i] / (1.0F + exp_minus_2u(x[i]));
}

// d/dx [x s] = s + x s (1 - s) 2u', with s = sigmoid(2u), 1 - s = e s and
// u' = sqrt(2/pi) (1 + 3 * 0.044715 x^2).
__attribute__((target_clones("avx512f", "avx2", "default"))) void backward_kernel(const float* x, const float* dy,
                                                                                  float* dx, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const float e = exp_minus_2u(x[i]);
    const float s = 1.0F / (1.0F + e);
    const float du = 2.0F * kSqrt2OverPi * (1.0F + 3.0F * kCubic * x[i] * x[i]);
    dx[i] = dy[i] * (s + x[i] * (e * s) * s * du);
  }
}

class GeluTanh : public torch::autograd::Function<GeluTanh> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& input) {
    const at::Tensor x = input.contiguous();
    at::Tensor y = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    at::parallel_for(0, x.numel(), kGrain, [&](std::int64_t begin, std::int64_t end) {
      forward_kernel(xp + begin, yp + begin, end - begin);
    });
    ctx->save_for_backward({x});
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const at::Tensor x = ctx->get_saved_variables()[0];
    const at::Tensor dy = grad_outputs[0].contiguous();
    at::Tensor dx = torch::empty_like(x);
    const float* xp = x.data_ptr<float>();
    const float* dyp = dy.data_ptr<float>();
    float* dxp = dx.data_ptr<float>();
    at::parallel_for(0, x.numel(), kGrain, [&](std::int64_t begin, std::int64_t end) {
      backward_kernel(xp + begin, dyp + begin, dxp + begin, end - begin);
    });
    return {dx};
  }
};

}  // namespace

at::Tensor gelu_tanh(const at::Tensor& x) {
  if (x.is_cpu() && x.scalar_type() == torch::kFloat32 && !at::autocast::is_cpu_enabled()) {
    return GeluTanh::apply(x);
  }
  return torch::gelu(x, "tanh");
}

}  // namespace hpctrain::model
