// A Hugging Face model directory's config.json, as the [model] keys it
// implies (model.init_from): LlamaForCausalLM ("llama"), GPT2LMHeadModel
// ("gpt2") and BertForMaskedLM ("bert", as a post-LayerNorm bert), the HF
// architectures hpctrain's models compute exactly. A
// config that asks for what hpctrain's model does not compute (another
// activation, biases in Llama, RoPE scaling, another LayerNorm epsilon for
// GPT-2) is refused with the field named, rather than loaded into a model that
// would compute something else.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "config/model_config.h"

namespace hpctrain::config {

struct HfModelConfig {
  std::string file;  // DIR/config.json, as errors name it
  ModelKind kind = ModelKind::kGpt;
  std::int64_t n_layer = 0;
  std::int64_t n_head = 0;
  std::int64_t d_model = 0;
  std::int64_t n_kv_head = 0;  // llama
  std::int64_t d_ff = 0;       // llama
  std::int64_t positions = 0;  // gpt2, bert: the learned position table's rows
  double rope_theta = 0;       // llama
  double norm_eps = 0;         // llama
  bool tie_embeddings = true;
  std::int64_t vocab_size = 0;

  // The [model] keys these values are, by name; the values as TOML.
  [[nodiscard]] toml::table model_keys() const;
  // The first key of `model` (a resolved [model]) that differs, as "KEY = A
  // here, FIELD = B in FILE"; empty when the model is this one.
  [[nodiscard]] std::string difference(const ModelConfig& model) const;
};

// Reads DIR/config.json (bounded, like all input from elsewhere); ConfigError
// names the file and the field.
HfModelConfig read_hf_model_config(const std::filesystem::path& dir);

// model.init_from in `root` (the experiment after its overrides): the keys of
// [model] its config.json gives and the experiment leaves out are filled in,
// and those it sets must agree; data.tokenizer defaults to the directory's
// tokenizer.model. The directory is read only when a key is missing (a run's
// stored config holds them all, so its base model may have moved since).
// Where the directory is gone, the config the run in `run_dir` stored when it
// started gives them (a resume never reads the directory's weights).
void apply_init_from(toml::table& root, const std::filesystem::path& run_dir);

}  // namespace hpctrain::config
