#include "config/model_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

ModelConfig ModelConfig::read(SectionReader section, const DataConfig& data) {
  ModelConfig m;
  m.kind = section.choice("kind", m.kind);
  m.n_layer = section.integer("n_layer", m.n_layer, 1, 1024);
  m.n_head = section.integer("n_head", m.n_head, 1, 1024);
  m.d_model = section.integer("d_model", m.d_model, 1, 1 << 16);
  m.max_seq_len = section.integer("max_seq_len", data.seq_len, 1, 1 << 20);
  m.init_std = section.number("init_std", m.init_std, 0.0, 1.0);
  if (m.kind == ModelKind::kLlama) {
    m.n_kv_head = section.integer("n_kv_head", m.n_head, 1, 1024);
    m.d_ff = section.integer("d_ff", (8 * m.d_model / 3 + 63) / 64 * 64, 1, 1 << 20);
    m.rope_theta = section.number("rope_theta", m.rope_theta, 1.0, 1e12);
    m.norm_eps = section.number("norm_eps", m.norm_eps, 0.0, 1.0);
    m.tie_embeddings = section.boolean("tie_embeddings", m.tie_embeddings);
  } else {
    // GPT's and BERT's output layers are the token embedding (as GPT-2's and
    // BERT's), the mlp's is its own: the key may say so, not otherwise, so
    // that an experiment written for a tied llama still reads as another kind.
    const bool tied = m.kind != ModelKind::kMlp;
    m.tie_embeddings = section.boolean("tie_embeddings", tied);
    if (m.tie_embeddings != tied) {
      throw ConfigError(fmt::format(
          "{}: model.kind = \"{}\" {}; model.tie_embeddings = {} chooses only for llama",
          section.origins({{"model", "tie_embeddings"}, {"model", "kind"}}), name_of(m.kind),
          tied ? "ties its output layer to the token embedding" : "has an output layer of its own", m.tie_embeddings));
    }
  }
  if (m.kind == ModelKind::kBert) m.norm_position = section.choice("norm_position", m.norm_position);
  m.init_from = section.string("init_from", "");
  section.finish();
  if (!m.init_from.empty() && m.kind == ModelKind::kMlp) {
    throw ConfigError(
        fmt::format("{}: model.init_from reads Hugging Face's GPT-2, Llama and BERT models; an mlp model has "
                    "no counterpart there",
                    section.origins({{"model", "init_from"}, {"model", "kind"}})));
  }
  if (!m.init_from.empty() && m.kind == ModelKind::kBert && m.norm_position != NormPosition::kPost) {
    throw ConfigError(
        fmt::format("{}: model.init_from reads Hugging Face's BertForMaskedLM, which normalises after each sublayer: "
                    "set model.norm_position = \"post\" (or leave it out)",
                    section.origins({{"model", "init_from"}, {"model", "norm_position"}})));
  }
  if (m.kind == ModelKind::kBert && data.token_files() && !data.has_tokenizer()) {
    throw ConfigError(
        fmt::format("{}: a bert model masks tokens with its tokenizer's <mask> piece, and token files "
                    "come with none: set data.tokenizer to the hpctrain tokenizer they were made with",
                    section.origins({{"model", "kind"}, {"data", "format"}})));
  }
  if (m.d_model % m.n_head != 0) {
    throw ConfigError(fmt::format("{}: model.d_model {} is not a multiple of model.n_head {}",
                                  section.origins({{"model", "d_model"}, {"model", "n_head"}}), m.d_model, m.n_head));
  }
  if (m.kind == ModelKind::kLlama && m.n_head % m.n_kv_head != 0) {
    throw ConfigError(fmt::format("{}: model.n_head {} is not a multiple of model.n_kv_head {}",
                                  section.origins({{"model", "n_head"}, {"model", "n_kv_head"}}), m.n_head,
                                  m.n_kv_head));
  }
  if (m.kind == ModelKind::kLlama && (m.d_model / m.n_head) % 2 != 0) {
    throw ConfigError(fmt::format("{}: RoPE rotates pairs of dimensions, and model.d_model {} / model.n_head {} is odd",
                                  section.origins({{"model", "d_model"}, {"model", "n_head"}}), m.d_model, m.n_head));
  }
  if (m.max_seq_len < data.seq_len) {
    throw ConfigError(fmt::format("{}: model.max_seq_len {} is shorter than data.seq_len {}",
                                  section.origins({{"model", "max_seq_len"}, {"data", "seq_len"}}), m.max_seq_len,
                                  data.seq_len));
  }
  return m;
}

}  // namespace hpctrain::config
