#include "optim/grad_clip.h"

#include <torch/types.h>

namespace hpctrain::optim {

GradClip grad_clip(const std::vector<at::Tensor>& parameters, double max_norm) {
  std::vector<torch::Tensor> norms;
  for (const auto& p : parameters) {
    if (p.grad().defined()) norms.push_back(p.grad().norm(2));
  }
  if (norms.empty()) return {};
  const torch::Tensor total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
  // The factor in float, as LibTorch's in-place multiply by a float tensor rounds it.
  const torch::Tensor scale = torch::clamp(max_norm / (total + 1e-6), c10::nullopt, 1.0);
  return {total.item<double>(), scale.item<float>()};
}

}  // namespace hpctrain::optim
