// The concrete models behind make_model (language_model.h).
#pragma once

#include <memory>

#include "model/language_model.h"

namespace hpctrain::model {

std::shared_ptr<LanguageModel> make_gpt(const config::ModelConfig& config, std::int64_t vocab_size);
std::shared_ptr<LanguageModel> make_bert(const config::ModelConfig& config, std::int64_t vocab_size);
std::shared_ptr<LanguageModel> make_llama(const config::ModelConfig& config, std::int64_t vocab_size);
std::shared_ptr<LanguageModel> make_mlp_lm(const config::ModelConfig& config, std::int64_t vocab_size);

}  // namespace hpctrain::model
