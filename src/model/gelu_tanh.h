// GELU with the tanh approximation (GPT-2's), 0.5 x (1 + tanh(u)) with
// u = sqrt(2/pi) (x + 0.044715 x^3). On CPUs in fp32 it is computed as the
// equal x * sigmoid(2u): one exponential instead of a tanh, which costs about
// four exponentials in ATen's kernel and was 4% of a tiny GPT's step, paid
// twice because ATen's backward takes the tanh again. Elsewhere (GPUs, bf16
// autocast) it is ATen's gelu.
#pragma once

#include <ATen/core/Tensor.h>

namespace hpctrain::model {

// Differentiable in x.
at::Tensor gelu_tanh(const at::Tensor& x);

}  // namespace hpctrain::model
