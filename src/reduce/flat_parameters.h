// A model's parameters as one flat fp32 vector, in registration order: what
// model merges communicate and keep anchors of.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "model/language_model.h"

namespace hpctrain::reduce {

// [begin, end) of a flat parameter vector.
struct FlatRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t size() const { return end - begin; }
  bool operator==(const FlatRange&) const = default;
};

// Each parameter's element count, in registration order: the flat vector's layout.
std::vector<std::int64_t> parameter_sizes(const model::LanguageModel& model);

// A fresh contiguous copy of every tensor, concatenated.
at::Tensor flatten(const std::vector<at::Tensor>& tensors);
// Copies `flat` back into the tensors, in place (shapes from the tensors).
void unflatten_into(const at::Tensor& flat, const std::vector<at::Tensor>& tensors);

// A fresh contiguous copy of every parameter, concatenated.
at::Tensor flatten_parameters(const model::LanguageModel& model);
// Copies `flat` back into the parameters (shapes from the model).
void unflatten_into_parameters(const at::Tensor& flat, model::LanguageModel& model);

}  // namespace hpctrain::reduce
