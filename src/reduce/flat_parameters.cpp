#include "reduce/flat_parameters.h"

#include <torch/types.h>
#include <torch/utils.h>

namespace hpctrain::reduce {

at::Tensor flatten(const std::vector<at::Tensor>& tensors) {
  std::vector<torch::Tensor> parts;
  parts.reserve(tensors.size());
  for (const auto& t : tensors) parts.push_back(t.detach().reshape({-1}));
  return torch::cat(parts);
}

void unflatten_into(const at::Tensor& flat, const std::vector<at::Tensor>& tensors) {
  torch::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (const auto& t : tensors) {
    t.copy_(flat.narrow(0, offset, t.numel()).view_as(t));
    offset += t.numel();
  }
}

std::vector<std::int64_t> parameter_sizes(const model::LanguageModel& model) {
  std::vector<std::int64_t> sizes;
  for (const auto& p : model.parameters()) sizes.push_back(p.numel());
  return sizes;
}

at::Tensor flatten_parameters(const model::LanguageModel& model) { return flatten(model.parameters()); }

void unflatten_into_parameters(const at::Tensor& flat, model::LanguageModel& model) {
  unflatten_into(flat, model.parameters());
}

}  // namespace hpctrain::reduce
