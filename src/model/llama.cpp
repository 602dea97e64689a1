// The Llama family's decoder (RoPE, RMSNorm, a SwiGLU MLP, grouped-query
// attention, no biases), with the arithmetic of Hugging Face's
// LlamaForCausalLM so that its checkpoints map one to one (docs/models.md):
//   x = x + o_proj(attention(rope(q_proj(h)), rope(k_proj(h)), v_proj(h))),  h = ln1(x)
//   x = x + down(silu(gate(h)) * up(h)),                                     h = ln2(x)
//   logits = ln_f(x) lm_head^T   (lm_head is tok_emb with tie_embeddings)
// RoPE rotates the two halves of each head against each other (HF's
// rotate_half layout, not Meta's interleaved pairs). The n_kv_head key/value
// heads are each shared by n_head / n_kv_head consecutive query heads.
#include <torch/nn/functional/activation.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>

#include "model/attention_core.h"
#include "model/linear_cross_entropy.h"
#include "model/models.h"
#include "model/rms_norm.h"
#include "model/rotary_embedding.h"

namespace hpctrain::model {
namespace {

torch::nn::Linear no_bias(std::int64_t in, std::int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

class GroupedQueryAttentionImpl : public torch::nn::Module {
 public:
  GroupedQueryAttentionImpl(std::int64_t d_model, std::int64_t n_head, std::int64_t n_kv_head)
      : n_head_(n_head), n_kv_head_(n_kv_head), head_dim_(d_model / n_head) {
    q_proj = register_module("q_proj", no_bias(d_model, d_model));
    k_proj = register_module("k_proj", no_bias(d_model, n_kv_head * head_dim_));
    v_proj = register_module("v_proj", no_bias(d_model, n_kv_head * head_dim_));
    o_proj = register_module("o_proj", no_bias(d_model, d_model));
  }

  // x [B, T, d]; cos and sin [T, head_dim] (rotary_embedding.h).
  torch::Tensor forward(const torch::Tensor& x, const RotaryTables& rope) {
    const std::int64_t b = x.size(0), t = x.size(1), d = x.size(2);
    const torch::Tensor q = apply_rotary(q_proj(x).view({b, t, n_head_, head_dim_}), rope);
    torch::Tensor k = apply_rotary(k_proj(x).view({b, t, n_kv_head_, head_dim_}), rope);
    torch::Tensor v = v_proj(x).view({b, t, n_kv_head_, head_dim_});
    if (n_kv_head_ != n_head_) {
      // Query head h reads key/value head h / (n_head / n_kv_head).
      k = k.repeat_interleave(n_head_ / n_kv_head_, 2);
      v = v.repeat_interleave(n_head_ / n_kv_head_, 2);
    }
    // attention_core's [q | k | v] layout, heads side by side in each.
    const torch::Tensor qkv = torch::cat({q.reshape({b, t, d}), k.reshape({b, t, d}), v.reshape({b, t, d})}, -1);
    const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim_));
    return o_proj(attention_core(qkv, n_head_, true, scale));
  }

  torch::nn::Linear q_proj{nullptr}, k_proj{nullptr}, v_proj{nullptr}, o_proj{nullptr};

 private:
  std::int64_t n_head_;
  std::int64_t n_kv_head_;
  std::int64_t head_dim_;
};
TORCH_MODULE(GroupedQueryAttention);

class SwiGluImpl : public torch::nn::Module {
 public:
  SwiGluImpl(std::int64_t d_model, std::int64_t d_ff) {
    gate = register_module("gate", no_bias(d_model, d_ff));
    up = register_module("up", no_bias(d_model, d_ff));
    down = register_module("down", no_bias(d_ff, d_model));
  }
  torch::Tensor forward(const torch::Tensor& x) { return down(torch::nn::functional::silu(gate(x)) * up(x)); }
  torch::nn::Linear gate{nullptr}, up{nullptr}, down{nullptr};
};
TORCH_MODULE(SwiGlu);

class DecoderBlockImpl : public torch::nn::Module {
 public:
  explicit DecoderBlockImpl(const config::ModelConfig& c) {
    ln1 = register_module("ln1", RmsNorm(c.d_model, c.norm_eps));
    attn = register_module("attn", GroupedQueryAttention(c.d_model, c.n_head, c.n_kv_head));
    ln2 = register_module("ln2", RmsNorm(c.d_model, c.norm_eps));
    mlp = register_module("mlp", SwiGlu(c.d_model, c.d_ff));
  }
  torch::Tensor forward(const torch::Tensor& input, const RotaryTables& rope) {
    const torch::Tensor x = input + attn->forward(ln1(input), rope);
    return x + mlp(ln2(x));
  }
  RmsNorm ln1{nullptr}, ln2{nullptr};
  GroupedQueryAttention attn{nullptr};
  SwiGlu mlp{nullptr};
};
TORCH_MODULE(DecoderBlock);

class Llama : public LanguageModel {
 public:
  Llama(const config::ModelConfig& c, std::int64_t vocab)
      : n_layer_(c.n_layer), d_model_(c.d_model), rotary_(c.d_model / c.n_head, c.rope_theta) {
    tok_emb = register_module("tok_emb", torch::nn::Embedding(vocab, c.d_model));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (std::int64_t i = 0; i < c.n_layer; ++i) blocks->push_back(DecoderBlock(c));
    ln_f = register_module("ln_f", RmsNorm(c.d_model, c.norm_eps));
    if (!c.tie_embeddings) lm_head = register_module("lm_head", no_bias(c.d_model, vocab));
    initialise(c);
  }

  torch::Tensor forward(const torch::Tensor& tokens) override {
    return torch::matmul(trunk(tokens), output_weight().t());
  }

  torch::Tensor loss(const torch::Tensor& tokens, const torch::Tensor& targets) override {
    return linear_cross_entropy(trunk(tokens).reshape({-1, d_model_}), output_weight(), torch::Tensor(),
                                targets.reshape({-1}));
  }

  [[nodiscard]] Objective objective() const override { return Objective::kCausal; }

  [[nodiscard]] double flops_per_token(std::int64_t seq_len) const override {
    return 6.0 * static_cast<double>(parameter_count()) + 12.0 * static_cast<double>(n_layer_ * d_model_ * seq_len);
  }

 private:
  const torch::Tensor& output_weight() const { return lm_head ? lm_head->weight : tok_emb->weight; }

  // Embedding, blocks and the final RMSNorm: [B, T] -> [B, T, d].
  torch::Tensor trunk(const torch::Tensor& tokens) {
    const RotaryTables rope = rotary_.tables(tokens.size(1), tokens.device());
    torch::Tensor x = tok_emb(tokens);
    for (const auto& block : *blocks) x = block->as<DecoderBlockImpl>()->forward(x, rope);
    return ln_f(x);
  }

  // Norms at 1; the projections that write into the residual stream (o_proj,
  // down) at init_std / sqrt(2 n_layer), as GPT-2 scales them; every other
  // matrix and the embeddings at init_std.
  void initialise(const config::ModelConfig& c) {
    torch::NoGradGuard no_grad;
    const double residual_std = c.init_std / std::sqrt(2.0 * static_cast<double>(c.n_layer));
    for (auto& item : named_parameters()) {
      const std::string& name = item.key();
      torch::Tensor& p = item.value();
      if (parameter_kind(name) == config::ParameterKind::kNorm) {
        p.fill_(1.0);
      } else if (name.find("attn.o_proj.") != std::string::npos || name.find("mlp.down.") != std::string::npos) {
        p.normal_(0.0, residual_std);
      } else {
        p.normal_(0.0, c.init_std);
      }
    }
  }

  std::int64_t n_layer_;
  std::int64_t d_model_;
  RotaryEmbedding rotary_;
  torch::nn::Embedding tok_emb{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  RmsNorm ln_f{nullptr};
  torch::nn::Linear lm_head{nullptr};
};

}  // namespace

std::shared_ptr<LanguageModel> make_llama(const config::ModelConfig& config, std::int64_t vocab_size) {
  return std::make_shared<Llama>(config, vocab_size);
}

}  // namespace hpctrain::model
