// The interface every model implements, and the factory that builds one from
// [model]. Parameter names are the interchange keys with the PyTorch reference
// (tests/reference/models.py) and with checkpoints: keep them stable.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>

#include "config/experiment.h"

namespace hpctrain::model {

enum class Objective {
  kCausal,  // predict token t+1 from tokens <= t
  kMasked,  // predict masked tokens from both sides
};

class LanguageModel : public torch::nn::Module {
 public:
  // tokens [B, T] int64 -> logits [B, T, vocab].
  virtual at::Tensor forward(const at::Tensor& tokens) = 0;
  // The training loss: language_model_loss(forward(tokens), targets), which a
  // model may compute without materialising the logits (linear_cross_entropy.h).
  virtual at::Tensor loss(const at::Tensor& tokens, const at::Tensor& targets);
  [[nodiscard]] virtual Objective objective() const = 0;
  // Training FLOPs per token: 6N plus the attention term 12 L d T (llm.c, PaLM).
  [[nodiscard]] virtual double flops_per_token(std::int64_t seq_len) const = 0;
  [[nodiscard]] std::int64_t parameter_count() const;
};

// Mean cross-entropy over the positions whose target is not -100.
at::Tensor language_model_loss(const at::Tensor& logits, const at::Tensor& targets);

// What a parameter is, from its name (biases; LayerNorm weights; embedding
// tables; other weights): initialisation and weight decay both go by it.
config::ParameterKind parameter_kind(const std::string& name);

// Builds and initialises a model (deterministic under torch::manual_seed).
std::shared_ptr<LanguageModel> make_model(const config::ModelConfig& config, std::int64_t vocab_size);

}  // namespace hpctrain::model
