// Clipping by global norm, measured here and applied inside the optimizer's
// pass (adamw_step's grad_scale), which saves LibTorch's separate pass that
// multiplies every gradient in place.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

namespace hpctrain::optim {

struct GradClip {
  double norm = 0;  // the global L2 norm of the gradients, before clipping
  float scale = 1;  // max_norm / (norm + 1e-6), at most 1
};

// The norm and factor exactly as torch::nn::utils::clip_grad_norm_ computes
// them, so clipped steps keep their bits; gradients left undefined are skipped.
GradClip grad_clip(const std::vector<at::Tensor>& parameters, double max_norm);

}  // namespace hpctrain::optim
