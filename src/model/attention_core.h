// softmax(scale * q k^T + causal mask) v for every head, straight from the
// qkv projection's output, the heart of every attention layer. On CPUs each
// thread takes whole heads, and each head's q, k, v and output are strided
// views of the [B, T, 3d] and [B, T, d] activations, so no head is copied out
// or back in either direction. ATen's bmm would multiply a batch one matrix
// after another, each split across every thread, and at T = 256, hd = 64 those
// products are too small for that to pay. Per head the scores also stay in
// cache from the product through the softmax, forward and backward. Causal
// heads go by blocks of query rows, each against only the keys up to its last
// row, which skips most of the masked half of the products at long T.
// On a GPU with LibTorch 2.1 or later it is LibTorch's fused attention;
// elsewhere (bf16 on CPUs, GPUs with LibTorch 1.x) the plain composition.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace hpctrain::model {

// qkv: [B, T, 3d], laid out [q | k | v], each split into n_head heads of
// d / n_head. Returns [B, T, d], heads side by side. causal: position i attends
// to positions <= i only. Differentiable in qkv. query_rows: rows per block on
// the CPU path (0 for the default, 128); tests use it to cut blocks anywhere.
at::Tensor attention_core(const at::Tensor& qkv, std::int64_t n_head, bool causal, double scale,
                          std::int64_t query_rows = 0);

}  // namespace hpctrain::model
