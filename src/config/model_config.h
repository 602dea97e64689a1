// [model]: the architecture and its shape.
#pragma once

#include <cstdint>
#include <string>

#include "config/choices.h"
#include "config/data_config.h"

namespace hpctrain::config {

class SectionReader;

enum class ModelKind { kGpt, kBert, kMlp, kLlama };
// Where a bert block normalises: before each sublayer, with a final LayerNorm
// (pre), or after each residual sum, as the original BERT and Hugging Face's
// BertForMaskedLM do (post).
enum class NormPosition { kPre, kPost };
// What a parameter is, from its name (model::parameter_kind): weight decay exempts kinds.
enum class ParameterKind { kWeight, kBias, kNorm, kEmbedding };

template <>
struct ChoiceTable<ModelKind> {
  static constexpr std::array<Choice<ModelKind>, 4> entries{
      {{"gpt", ModelKind::kGpt}, {"bert", ModelKind::kBert}, {"mlp", ModelKind::kMlp}, {"llama", ModelKind::kLlama}}};
};
template <>
struct ChoiceTable<NormPosition> {
  static constexpr std::array<Choice<NormPosition>, 2> entries{
      {{"pre", NormPosition::kPre}, {"post", NormPosition::kPost}}};
};
template <>
struct ChoiceTable<ParameterKind> {
  static constexpr std::array<Choice<ParameterKind>, 4> entries{{{"weight", ParameterKind::kWeight},
                                                                 {"bias", ParameterKind::kBias},
                                                                 {"norm", ParameterKind::kNorm},
                                                                 {"embedding", ParameterKind::kEmbedding}}};
};

struct ModelConfig {
  // gpt (causal LM), bert (MLM encoder), mlp (a next-token MLP over a window),
  // llama (causal LM: RoPE, RMSNorm, SwiGLU, grouped-query attention, no biases)
  ModelKind kind = ModelKind::kGpt;
  std::int64_t n_layer = 4;
  std::int64_t n_head = 4;
  std::int64_t d_model = 256;
  std::int64_t max_seq_len = 0;  // default: data.seq_len
  double init_std = 0.02;
  // bert only: pre (the default) or post, which Hugging Face's BertForMaskedLM computes
  NormPosition norm_position = NormPosition::kPre;
  // llama only (the other kinds refuse them):
  std::int64_t n_kv_head = 0;   // key/value heads, dividing n_head; default: n_head
  std::int64_t d_ff = 0;        // SwiGLU's hidden width; default: 8/3 d_model rounded up to a multiple of 64
  double rope_theta = 10000.0;  // RoPE's base
  double norm_eps = 1e-6;       // RMSNorm's epsilon
  // The output layer shares the token embedding: llama chooses (default no);
  // gpt and bert always do, the mlp never (the key may only say so).
  bool tie_embeddings = false;
  // A Hugging Face model directory (gpt, llama, post-LayerNorm bert) whose weights a new run starts
  // from; its config.json gives the keys above (config/hf_model_config.h).
  std::string init_from;

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static ModelConfig read(SectionReader section, const DataConfig& data);
};

}  // namespace hpctrain::config
