#include "ckpt/hf_layout.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "ckpt_file/checkpoint_error.h"

namespace hpctrain::ckpt {
namespace {

std::vector<HfTensorName> gpt2_layout(const config::ModelConfig& m) {
  std::vector<HfTensorName> out = {{"transformer.wte.weight", "tok_emb.weight", false},
                                   {"transformer.wpe.weight", "pos_emb.weight", false}};
  for (std::int64_t i = 0; i < m.n_layer; ++i) {
    const std::string hf = fmt::format("transformer.h.{}.", i);
    const std::string ours = fmt::format("blocks.{}.", i);
    for (const auto& [theirs, mine, linear] :
         {std::tuple{"ln_1", "ln1", false}, std::tuple{"attn.c_attn", "attn.qkv", true},
          std::tuple{"attn.c_proj", "attn.proj", true}, std::tuple{"ln_2", "ln2", false},
          std::tuple{"mlp.c_fc", "mlp.fc", true}, std::tuple{"mlp.c_proj", "mlp.proj", true}}) {
      out.push_back({hf + theirs + ".weight", ours + mine + ".weight", linear});
      out.push_back({hf + theirs + ".bias", ours + mine + ".bias", false});
    }
  }
  out.push_back({"transformer.ln_f.weight", "ln_f.weight", false});
  out.push_back({"transformer.ln_f.bias", "ln_f.bias", false});
  return out;
}

std::vector<HfTensorName> llama_layout(const config::ModelConfig& m) {
  std::vector<HfTensorName> out = {{"model.embed_tokens.weight", "tok_emb.weight", false}};
  for (std::int64_t i = 0; i < m.n_layer; ++i) {
    const std::string hf = fmt::format("model.layers.{}.", i);
    const std::string ours = fmt::format("blocks.{}.", i);
    for (const auto& [theirs, mine] :
         {std::pair{"input_layernorm", "ln1"}, std::pair{"self_attn.q_proj", "attn.q_proj"},
          std::pair{"self_attn.k_proj", "attn.k_proj"}, std::pair{"self_attn.v_proj", "attn.v_proj"},
          std::pair{"self_attn.o_proj", "attn.o_proj"}, std::pair{"post_attention_layernorm", "ln2"},
          std::pair{"mlp.gate_proj", "mlp.gate"}, std::pair{"mlp.up_proj", "mlp.up"},
          std::pair{"mlp.down_proj", "mlp.down"}}) {
      out.push_back({hf + theirs + ".weight", ours + mine + ".weight", false});
    }
  }
  out.push_back({"model.norm.weight", "ln_f.weight", false});
  if (!m.tie_embeddings) out.push_back({"lm_head.weight", "lm_head.weight", false});
  return out;
}

std::vector<HfTensorName> bert_layout(const config::ModelConfig& m) {
  std::vector<HfTensorName> out = {{"bert.embeddings.word_embeddings.weight", "tok_emb.weight", false},
                                   {"bert.embeddings.position_embeddings.weight", "pos_emb.weight", false},
                                   {"bert.embeddings.LayerNorm.weight", "emb_ln.weight", false},
                                   {"bert.embeddings.LayerNorm.bias", "emb_ln.bias", false}};
  for (std::int64_t i = 0; i < m.n_layer; ++i) {
    const std::string hf = fmt::format("bert.encoder.layer.{}.", i);
    const std::string ours = fmt::format("blocks.{}.", i);
    int part = 0;
    for (const char* projection : {"query", "key", "value"}) {
      for (const char* leaf : {"weight", "bias"}) {
        out.push_back({fmt::format("{}attention.self.{}.{}", hf, projection, leaf),
                       fmt::format("{}attn.qkv.{}", ours, leaf), false, part, 3});
      }
      ++part;
    }
    for (const auto& [theirs, mine] :
         {std::pair{"attention.output.dense", "attn.proj"}, std::pair{"attention.output.LayerNorm", "ln1"},
          std::pair{"intermediate.dense", "mlp.fc"}, std::pair{"output.dense", "mlp.proj"},
          std::pair{"output.LayerNorm", "ln2"}}) {
      for (const char* leaf : {"weight", "bias"}) {
        out.push_back({fmt::format("{}{}.{}", hf, theirs, leaf), fmt::format("{}{}.{}", ours, mine, leaf), false});
      }
    }
  }
  for (const char* leaf : {"weight", "bias"}) {
    out.push_back({fmt::format("cls.predictions.transform.dense.{}", leaf), fmt::format("mlm.dense.{}", leaf), false});
  }
  for (const char* leaf : {"weight", "bias"}) {
    out.push_back({fmt::format("cls.predictions.transform.LayerNorm.{}", leaf), fmt::format("mlm.ln.{}", leaf), false});
  }
  out.push_back({"cls.predictions.bias", "mlm.bias", false});
  return out;
}

bool ends_with(const std::string& text, const std::string& tail) {
  // Not std::string::ends_with: files of the LibTorch layers must also parse
  // as C++17, as .ci/lint checks them.
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

bool starts_with(const std::string& text, const std::string& head) { return text.compare(0, head.size(), head) == 0; }

// Our parameter `ours` ("blocks.3.attn.qkv.weight") as the model kinds
// build it (model/transformer.cpp, model/llama.cpp): [out, in] for a linear
// map, [rows, d_model] for an embedding.
std::vector<std::int64_t> our_shape(const std::string& ours, const config::ModelConfig& m, std::int64_t vocab) {
  const std::int64_t d = m.d_model;
  std::string local = ours;
  if (starts_with(local, "blocks.")) local = local.substr(local.find('.', 7) + 1);
  const bool bias = ends_with(local, ".bias");
  const std::string module = local.substr(0, local.rfind('.'));
  auto linear = [&](std::int64_t out, std::int64_t in) {
    return bias ? std::vector<std::int64_t>{out} : std::vector<std::int64_t>{out, in};
  };
  if (module == "tok_emb" || module == "lm_head") return {vocab, d};
  if (module == "pos_emb") return {m.max_seq_len, d};
  if (local == "mlm.bias") return {vocab};
  if (module == "ln1" || module == "ln2" || module == "ln_f" || module == "emb_ln" || module == "mlm.ln") return {d};
  if (module == "attn.qkv") return linear(3 * d, d);
  if (module == "attn.proj" || module == "mlm.dense" || module == "attn.q_proj" || module == "attn.o_proj") {
    return linear(d, d);
  }
  if (module == "attn.k_proj" || module == "attn.v_proj") return linear(m.n_kv_head * (d / m.n_head), d);
  if (module == "mlp.fc") return linear(4 * d, d);
  if (module == "mlp.proj") return linear(d, 4 * d);
  if (module == "mlp.gate" || module == "mlp.up") return linear(m.d_ff, d);
  if (module == "mlp.down") return linear(d, m.d_ff);
  throw std::logic_error(fmt::format("hf_shape: no shape for hpctrain's {}", ours));
}

}  // namespace

std::vector<HfTensorName> hf_layout(const config::ModelConfig& model) {
  switch (model.kind) {
    case config::ModelKind::kGpt: return gpt2_layout(model);
    case config::ModelKind::kLlama: return llama_layout(model);
    case config::ModelKind::kBert:
      if (model.norm_position == config::NormPosition::kPost) return bert_layout(model);
      throw ckpt_file::CheckpointError(
          "model.kind = bert with model.norm_position = pre has no Hugging Face counterpart: it normalises before "
          "each sublayer and once more at the end (pre-LayerNorm), HF's BertForMaskedLM after each sublayer "
          "(post-LayerNorm), so the same weights compute another function there; export it with --format "
          "hpctrain, or train with model.norm_position = \"post\"");
    case config::ModelKind::kMlp:
      throw ckpt_file::CheckpointError(
          "model.kind = mlp has no Hugging Face counterpart (a next-token MLP over a window); export it with "
          "--format hpctrain");
  }
  return {};
}

std::vector<std::int64_t> hf_shape(const HfTensorName& name, const config::ModelConfig& model,
                                   std::int64_t vocab_size) {
  std::vector<std::int64_t> shape = our_shape(name.ours, model, vocab_size);
  shape[0] /= name.parts;
  if (name.transposed) std::swap(shape[0], shape[1]);
  return shape;
}

std::vector<HfTiedName> hf_tied(const config::ModelConfig& model) {
  switch (model.kind) {
    case config::ModelKind::kGpt: return {{"lm_head.weight", "tok_emb.weight"}};
    case config::ModelKind::kLlama:
      if (model.tie_embeddings) return {{"lm_head.weight", "tok_emb.weight"}};
      return {};
    case config::ModelKind::kBert:
      return {{"cls.predictions.decoder.weight", "tok_emb.weight"}, {"cls.predictions.decoder.bias", "mlm.bias"}};
    case config::ModelKind::kMlp: return {};
  }
  return {};
}

std::string hf_architecture(const config::ModelConfig& model) {
  switch (model.kind) {
    case config::ModelKind::kLlama: return "LlamaForCausalLM";
    case config::ModelKind::kBert: return "BertForMaskedLM";
    default: return "GPT2LMHeadModel";
  }
}

bool is_hf_unused(const std::string& hf_name) {
  return ends_with(hf_name, ".attn.bias") || ends_with(hf_name, ".attn.masked_bias") ||
         ends_with(hf_name, ".rotary_emb.inv_freq") || ends_with(hf_name, "embeddings.position_ids") ||
         ends_with(hf_name, "embeddings.token_type_ids") || starts_with(hf_name, "bert.pooler.") ||
         starts_with(hf_name, "pooler.") || starts_with(hf_name, "cls.seq_relationship.");
}

}  // namespace hpctrain::ckpt
