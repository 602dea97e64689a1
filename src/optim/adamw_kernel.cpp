#include "optim/adamw_kernel.h"

#include <cmath>

namespace hpctrain::optim {

// Compiled for AVX-512, AVX2 and plain x86-64, picked when the program loads.
// Without contraction into FMAs (CMakeLists.txt), and with division and square
// root correctly rounded at every width, every variant gives the same bits.
__attribute__((target_clones("avx512f", "avx2", "default"))) void adamw_kernel(
    const AdamwScalars& s, float* __restrict param, const float* __restrict grad, float* __restrict exp_avg,
    float* __restrict exp_avg_sq, std::int64_t n) {
  const AdamwScalars c = s;  // by value, so the compiler knows the loop cannot change it
  for (std::int64_t i = 0; i < n; ++i) {
    const float g = grad[i] * c.grad_scale;
    const float m = exp_avg[i] * c.beta1 + c.one_minus_beta1 * g;
    const float v = exp_avg_sq[i] * c.beta2 + c.one_minus_beta2 * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    param[i] = param[i] * c.decay - c.step_size * m / (std::sqrt(v) / c.sqrt_correction2 + c.eps);
  }
}

}  // namespace hpctrain::optim
