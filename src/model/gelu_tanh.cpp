#include "model/gelu_tanh.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/types.h>

#include <cstdint>

#include "model/autocast_state.h"
#include "model/vector_exp.h"

namespace hpctrain::model {
namespace {

constexpr float kSqrt2OverPi = 0.7978845608028654F;
constexpr float kCubic = 0.044715F;
constexpr std::int64_t kGrain = 16384;

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
  if (x.is_cpu() && x.scalar_type() == torch::kFloat32 && !cpu_autocast_enabled()) {
    return GeluTanh::apply(x);
  }
  return torch::gelu(x, "tanh");
}

}  // namespace hpctrain::model
