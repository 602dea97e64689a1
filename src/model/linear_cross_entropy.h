// The output layer and its cross-entropy as one operation, the way fused
// "linear cross-entropy" losses work (Liger Kernel, Apple's Cut Cross-Entropy).
// Rows whose target is ignored are dropped before the output GEMM: a masked LM
// predicts 15% of its tokens, and its head took 25 ms instead of 160 ms (N 2048,
// d 256, V 8192, 2 threads). The rest is computed a block of rows at a time,
// and each block of logits becomes its gradient while still in cache, so no
// log-softmax output or its gradient is allocated (2 x 64 MB on the quickstart
// GPT). Within a block, each row goes through max, exponentials and scaling
// in one call while it sits in L1/L2 (model/cross_entropy_row), and its
// exponentials serve both its log-sum-exp and its softmax.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace hpctrain::model {

// Mean cross-entropy of (hidden @ weight^T + bias) against targets, over the
// targets that are not -100. hidden [N, d], weight [V, d], bias [V] or
// undefined, targets [N] integers. Gradients flow to hidden, weight and bias.
// A target outside [0, V) (other than -100) is an error: std::out_of_range on
// the fused path, LibTorch's own on the plain one.
// CPU fp32 without autocast takes the fused path; anything else (GPUs, bf16)
// computes the plain logits and LibTorch's cross-entropy. rows_per_block = 0
// picks blocks of about 8 MiB of logits and at least 256 rows.
at::Tensor linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& bias,
                                const at::Tensor& targets, std::int64_t rows_per_block = 0);

}  // namespace hpctrain::model
