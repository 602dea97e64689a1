// The SHA-256 of a model's weights, which proves two runs bit-identical.
#pragma once

#include <string>

#include "model/language_model.h"

namespace hpctrain::train {

// SHA-256 over every parameter's name and raw bytes, in registration order.
std::string weights_sha256(const model::LanguageModel& model);

}  // namespace hpctrain::train
