// GPT and the BERT-style encoder: the same transformer blocks, causal for GPT
// and bidirectional for BERT. Pre-LayerNorm (GPT-2; bert by default), with a
// final LayerNorm after the last block:
//   x = x + proj(attention(ln1(x)));  x = x + proj(gelu_tanh(fc(ln2(x))))
// or post-LayerNorm (model.norm_position = "post": the original BERT, what
// Hugging Face's BertForMaskedLM computes), with none at the end:
//   x = ln1(x + proj(attention(x)));  x = ln2(x + proj(gelu_tanh(fc(x))))
// Attention splits qkv's output as [q | k | v], each into heads of d/H.
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>

#include "model/attention_core.h"
#include "model/gelu_tanh.h"
#include "model/linear_cross_entropy.h"
#include "model/models.h"

namespace hpctrain::model {
namespace {

torch::nn::LayerNorm layer_norm(std::int64_t d_model) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({d_model}).eps(1e-5));
}

class AttentionImpl : public torch::nn::Module {
 public:
  AttentionImpl(std::int64_t d_model, std::int64_t n_head, bool causal) : n_head_(n_head), causal_(causal) {
    qkv = register_module("qkv", torch::nn::Linear(d_model, 3 * d_model));
    proj = register_module("proj", torch::nn::Linear(d_model, d_model));
  }

  torch::Tensor forward(const torch::Tensor& x) {
    const std::int64_t head_dim = x.size(2) / n_head_;
    const double scale = 1.0 / std::sqrt(static_cast<double>(head_dim));
    return proj(attention_core(qkv(x), n_head_, causal_, scale));
  }

  torch::nn::Linear qkv{nullptr}, proj{nullptr};

 private:
  std::int64_t n_head_;
  bool causal_;
};
TORCH_MODULE(Attention);

class MlpImpl : public torch::nn::Module {
 public:
  explicit MlpImpl(std::int64_t d_model) {
    fc = register_module("fc", torch::nn::Linear(d_model, 4 * d_model));
    proj = register_module("proj", torch::nn::Linear(4 * d_model, d_model));
  }
  torch::Tensor forward(const torch::Tensor& x) { return proj(gelu_tanh(fc(x))); }
  torch::nn::Linear fc{nullptr}, proj{nullptr};
};
TORCH_MODULE(Mlp);

class BlockImpl : public torch::nn::Module {
 public:
  BlockImpl(std::int64_t d_model, std::int64_t n_head, bool causal, bool post_norm) : post_norm_(post_norm) {
    ln1 = register_module("ln1", layer_norm(d_model));
    attn = register_module("attn", Attention(d_model, n_head, causal));
    ln2 = register_module("ln2", layer_norm(d_model));
    mlp = register_module("mlp", Mlp(d_model));
  }
  torch::Tensor forward(const torch::Tensor& input) {
    if (post_norm_) {
      const torch::Tensor x = ln1(input + attn(input));
      return ln2(x + mlp(x));
    }
    const torch::Tensor x = input + attn(ln1(input));
    return x + mlp(ln2(x));
  }
  torch::nn::LayerNorm ln1{nullptr}, ln2{nullptr};
  Attention attn{nullptr};
  Mlp mlp{nullptr};

 private:
  bool post_norm_;
};
TORCH_MODULE(Block);

void init_normal(torch::nn::Module& module, const config::ModelConfig& c) {
  torch::NoGradGuard no_grad;
  // GPT-2: residual projections shrink with depth so the residual stream's
  // variance does not grow with the number of blocks.
  const double residual_std = c.init_std / std::sqrt(2.0 * static_cast<double>(c.n_layer));
  for (auto& item : module.named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    const config::ParameterKind kind = parameter_kind(name);
    if (kind == config::ParameterKind::kNorm) {
      p.fill_(1.0);
    } else if (kind == config::ParameterKind::kBias) {
      p.zero_();
    } else if (name.find("attn.proj.weight") != std::string::npos ||
               name.find("mlp.proj.weight") != std::string::npos) {
      p.normal_(0.0, residual_std);
    } else {
      p.normal_(0.0, c.init_std);
    }
  }
}

// The MLM head: dense, GELU, LayerNorm, then the tied output embedding plus a bias.
class MlmHeadImpl : public torch::nn::Module {
 public:
  MlmHeadImpl(std::int64_t d_model, std::int64_t vocab) {
    dense = register_module("dense", torch::nn::Linear(d_model, d_model));
    ln = register_module("ln", layer_norm(d_model));
    bias = register_parameter("bias", torch::zeros({vocab}));
  }
  // Everything before the output embedding.
  torch::Tensor transform(const torch::Tensor& x) { return ln(gelu_tanh(dense(x))); }
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& output_embedding) {
    return torch::matmul(transform(x), output_embedding.t()) + bias;
  }
  torch::nn::Linear dense{nullptr};
  torch::nn::LayerNorm ln{nullptr};
  torch::Tensor bias;
};
TORCH_MODULE(MlmHead);

class Transformer : public LanguageModel {
 public:
  Transformer(const config::ModelConfig& c, std::int64_t vocab, bool causal)
      : causal_(c.kind == config::ModelKind::kGpt && causal),
        post_norm_(!causal_ && c.norm_position == config::NormPosition::kPost),
        n_layer_(c.n_layer),
        d_model_(c.d_model) {
    tok_emb = register_module("tok_emb", torch::nn::Embedding(vocab, c.d_model));
    pos_emb = register_module("pos_emb", torch::nn::Embedding(c.max_seq_len, c.d_model));
    if (!causal_) emb_ln = register_module("emb_ln", layer_norm(c.d_model));
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (std::int64_t i = 0; i < c.n_layer; ++i) blocks->push_back(Block(c.d_model, c.n_head, causal_, post_norm_));
    if (!post_norm_) ln_f = register_module("ln_f", layer_norm(c.d_model));
    if (!causal_) mlm = register_module("mlm", MlmHead(c.d_model, vocab));
    init_normal(*this, c);
  }

  torch::Tensor forward(const torch::Tensor& tokens) override {
    const torch::Tensor x = trunk(tokens);
    if (causal_) return torch::matmul(x, tok_emb->weight.t());  // tied output embedding
    return mlm(x, tok_emb->weight);
  }

  torch::Tensor loss(const torch::Tensor& tokens, const torch::Tensor& targets) override {
    const torch::Tensor x = trunk(tokens);
    const torch::Tensor h = causal_ ? x : mlm->transform(x);
    return linear_cross_entropy(h.reshape({-1, d_model_}), tok_emb->weight, causal_ ? torch::Tensor() : mlm->bias,
                                targets.reshape({-1}));
  }

  [[nodiscard]] Objective objective() const override { return causal_ ? Objective::kCausal : Objective::kMasked; }

  [[nodiscard]] double flops_per_token(std::int64_t seq_len) const override {
    return 6.0 * static_cast<double>(parameter_count()) + 12.0 * static_cast<double>(n_layer_ * d_model_ * seq_len);
  }

 private:
  // Embeddings, blocks and the final LayerNorm (pre-LayerNorm): [B, T] -> [B, T, d].
  torch::Tensor trunk(const torch::Tensor& tokens) {
    torch::Tensor x = tok_emb(tokens) + pos_emb(torch::arange(tokens.size(1), tokens.options()));
    if (!causal_) x = emb_ln(x);
    for (const auto& block : *blocks) x = block->as<BlockImpl>()->forward(x);
    return post_norm_ ? x : ln_f(x);
  }

  bool causal_;
  bool post_norm_;
  std::int64_t n_layer_;
  std::int64_t d_model_;
  torch::nn::Embedding tok_emb{nullptr}, pos_emb{nullptr};
  torch::nn::LayerNorm emb_ln{nullptr}, ln_f{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  MlmHead mlm{nullptr};
};

}  // namespace

std::shared_ptr<LanguageModel> make_gpt(const config::ModelConfig& config, std::int64_t vocab_size) {
  return std::make_shared<Transformer>(config, vocab_size, true);
}

std::shared_ptr<LanguageModel> make_bert(const config::ModelConfig& config, std::int64_t vocab_size) {
  return std::make_shared<Transformer>(config, vocab_size, false);
}

}  // namespace hpctrain::model
