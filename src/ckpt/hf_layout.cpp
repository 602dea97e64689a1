#include "ckpt/hf_layout.h"

#include <fmt/format.h>

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

}  // namespace

std::vector<HfTensorName> hf_layout(const config::ModelConfig& model) {
  switch (model.kind) {
    case config::ModelKind::kGpt: return gpt2_layout(model);
    case config::ModelKind::kLlama: return llama_layout(model);
    case config::ModelKind::kBert:
      throw ckpt_file::CheckpointError(
          "model.kind = bert has no Hugging Face counterpart: hpctrain's encoder normalises before each sublayer "
          "and once more at the end (pre-LayerNorm), HF's BertForMaskedLM after each sublayer (post-LayerNorm), so "
          "the same weights compute another function there; export it with --format hpctrain");
    case config::ModelKind::kMlp:
      throw ckpt_file::CheckpointError(
          "model.kind = mlp has no Hugging Face counterpart (a next-token MLP over a window); export it with "
          "--format hpctrain");
  }
  return {};
}

std::string hf_architecture(const config::ModelConfig& model) {
  return model.kind == config::ModelKind::kLlama ? "LlamaForCausalLM" : "GPT2LMHeadModel";
}

bool is_hf_buffer(const std::string& hf_name) {
  // Not std::string::ends_with: files of the LibTorch layers must also parse
  // as C++17, as .ci/lint checks them.
  const auto ends_with = [&hf_name](const std::string& tail) {
    return hf_name.size() >= tail.size() && hf_name.compare(hf_name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends_with(".attn.bias") || ends_with(".attn.masked_bias") || ends_with(".rotary_emb.inv_freq");
}

}  // namespace hpctrain::ckpt
