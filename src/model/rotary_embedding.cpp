#include "model/rotary_embedding.h"

#include <torch/types.h>
#include <torch/utils.h>

namespace hpctrain::model {

RotaryTables RotaryEmbedding::tables(std::int64_t length, const c10::Device& device) {
  if (cached_.cos.defined() && cached_.cos.size(0) == length && cached_.cos.device() == device) return cached_;
  const torch::NoGradGuard no_grad;
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  // HF's order of operations: theta ** (2i / hd) in fp32, its reciprocal, the
  // product with each position, each frequency twice.
  const at::Tensor exponent =
      torch::arange(0, head_dim_, 2, torch::kInt64).to(torch::kFloat32) / static_cast<float>(head_dim_);
  const at::Tensor inv_freq = 1.0 / torch::pow(torch::scalar_tensor(theta_, f32), exponent);
  const at::Tensor positions = torch::arange(length, torch::kInt64).to(torch::kFloat32);
  const at::Tensor freqs = torch::outer(positions, inv_freq);
  const at::Tensor angles = torch::cat({freqs, freqs}, -1);
  cached_ = {angles.cos().to(device), angles.sin().to(device)};
  return cached_;
}

at::Tensor apply_rotary(const at::Tensor& x, const RotaryTables& rope) {
  const std::int64_t half = x.size(-1) / 2;
  // [T, hd] -> [T, 1, hd]: the same angles for every head.
  const at::Tensor cos = rope.cos.unsqueeze(1).to(x.scalar_type());
  const at::Tensor sin = rope.sin.unsqueeze(1).to(x.scalar_type());
  const at::Tensor rotated = torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * cos + rotated * sin;
}

}  // namespace hpctrain::model
