// softmax(scale * q k^T + bias) v over [B*H, T, hd] tensors, the heart of
// every attention layer. On CPUs each thread takes whole heads: ATen's bmm
// multiplies a batch one matrix after another, each split across every thread,
// and at T = 256, hd = 64 those products are too small for that to pay. Per
// head the scores also stay in cache from the product through the softmax,
// forward and backward. Elsewhere (GPUs, bf16) it is the plain composition.
#pragma once

#include <ATen/core/Tensor.h>

namespace hpctrain::model {

// q, k, v: [N, T, hd]; bias: [T, T], added to every head's scores (e.g. -inf
// above the diagonal), or undefined for none. Differentiable in q, k and v.
at::Tensor attention_core(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                          double scale);

}  // namespace hpctrain::model
