#include "reduce/flat_parameters.h"

#include <torch/torch.h>

namespace hpctrain::reduce {

at::Tensor flatten_parameters(const model::LanguageModel& model) {
  std::vector<torch::Tensor> parts;
  for (const auto& p : model.parameters()) parts.push_back(p.detach().reshape({-1}));
  return torch::cat(parts);
}

void unflatten_into_parameters(const at::Tensor& flat, model::LanguageModel& model) {
  torch::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (auto& p : model.parameters()) {
    p.copy_(flat.narrow(0, offset, p.numel()).view_as(p));
    offset += p.numel();
  }
}

}  // namespace hpctrain::reduce
