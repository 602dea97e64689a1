// A model's parameters as one flat fp32 vector, in registration order: what
// model merges communicate and keep anchors of.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "model/language_model.h"

namespace hpctrain::reduce {

// A fresh contiguous copy of every tensor, concatenated.
at::Tensor flatten(const std::vector<at::Tensor>& tensors);
// Copies `flat` back into the tensors, in place (shapes from the tensors).
void unflatten_into(const at::Tensor& flat, const std::vector<at::Tensor>& tensors);

// A fresh contiguous copy of every parameter, concatenated.
at::Tensor flatten_parameters(const model::LanguageModel& model);
// Copies `flat` back into the parameters (shapes from the model).
void unflatten_into_parameters(const at::Tensor& flat, model::LanguageModel& model);

}  // namespace hpctrain::reduce
