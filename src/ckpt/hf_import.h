// model.init_from: a Hugging Face model directory's weights into a model
// built from the same architecture (config/hf_model_config.h made the
// [model] keys agree with its config.json). Every parameter must be in the
// files with the shape the model has (HF's layout, ckpt/hf_layout.h), every
// tensor in the files must be a parameter or a known buffer, and a tied
// lm_head the files hold must equal the embedding; F16 and BF16 are widened
// to float32 exactly. Errors name the file and the tensor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "config/model_config.h"
#include "model/language_model.h"

namespace hpctrain::ckpt {

struct HfImport {
  std::size_t tensors = 0;
  std::string dtypes;  // "F32", "BF16", "F16 and F32", ...
};

// Checks DIR against `config` and a vocabulary of `vocab_size` from the
// files' headers alone, reading no weight: config.json agrees, and every
// tensor the model needs (and every tied one a file holds) is there with
// the shape the configuration gives. Called before the model is built, so
// that a config.json asking for more than its weights hold allocates
// nothing; load_hf_weights checks the same again.
void check_hf_weights(const std::filesystem::path& dir, const config::ModelConfig& config, std::int64_t vocab_size);

HfImport load_hf_weights(const std::filesystem::path& dir, const config::ModelConfig& config,
                         model::LanguageModel& model);

}  // namespace hpctrain::ckpt
