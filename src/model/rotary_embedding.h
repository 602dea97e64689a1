// Rotary position embedding (RoPE, Su et al., 2021) in Hugging Face's layout:
// a head's dimension i < hd/2 is rotated with dimension i + hd/2 by the angle
// pos · theta^(-2i/hd),
//   rope(x) = x · cos + rotate_half(x) · sin,  rotate_half([x1 | x2]) = [-x2 | x1],
// with cos and sin [T, hd] (each frequency twice). Meta's original checkpoints
// rotate interleaved pairs instead; their q and k weights map to this layout
// by a permutation of rows (docs/models.md).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>

namespace hpctrain::model {

struct RotaryTables {
  at::Tensor cos;  // [T, hd], fp32
  at::Tensor sin;
};

class RotaryEmbedding {
 public:
  RotaryEmbedding(std::int64_t head_dim, double theta) : head_dim_(head_dim), theta_(theta) {}
  // The tables for positions 0 .. length - 1 (computed once per length and device).
  RotaryTables tables(std::int64_t length, const c10::Device& device);

 private:
  std::int64_t head_dim_;
  double theta_;
  RotaryTables cached_;
};

// x [B, T, heads, hd] rotated by the tables, in x's type (as HF casts the tables).
at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& rope);

}  // namespace hpctrain::model
