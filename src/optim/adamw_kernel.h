// AdamW's element-wise update over one contiguous float32 range, in a single
// pass over memory, with the gradient clipping factor folded in.
#pragma once

#include <cstdint>

namespace hpctrain::optim {

// LibTorch's rule, its scalars rounded to float as ATen rounds them, with
// g = grad * grad_scale:
//   p <- p * decay;  m <- b1 * m + (1 - b1) * g;  v <- b2 * v + (1 - b2) * g * g
//   p <- p - step_size * m / (sqrt(v) / sqrt_correction2 + eps)
struct AdamwScalars {
  float decay = 1;  // 1 - lr * weight_decay
  float beta1 = 0, one_minus_beta1 = 1;
  float beta2 = 0, one_minus_beta2 = 1;
  float sqrt_correction2 = 1;  // sqrt(1 - beta2^t)
  float step_size = 0;         // lr / (1 - beta1^t)
  float eps = 0;
  float grad_scale = 1;  // the clipping factor; 1 leaves the gradient as it is
};

// Element-wise only, so the result does not depend on how a caller splits the
// range, and the same bits on every instruction set the kernel picks.
void adamw_kernel(const AdamwScalars& s, float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                  std::int64_t n);

}  // namespace hpctrain::optim
