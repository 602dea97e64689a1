#include "model/language_model.h"

#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <stdexcept>

#include "model/model_bytes.h"
#include "model/models.h"

namespace hpctrain::model {

std::int64_t LanguageModel::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

at::Tensor LanguageModel::loss(const at::Tensor& tokens, const at::Tensor& targets) {
  return language_model_loss(forward(tokens), targets);
}

at::Tensor language_model_loss(const at::Tensor& logits, const at::Tensor& targets) {
  const auto vocab = logits.size(-1);
  return torch::nn::functional::cross_entropy(logits.reshape({-1, vocab}).to(torch::kFloat32), targets.reshape({-1}),
                                              torch::nn::functional::CrossEntropyFuncOptions().ignore_index(-100));
}

config::ParameterKind parameter_kind(const std::string& name) {
  // Not std::string::ends_with: files that include LibTorch must also parse
  // as C++17 (clang-tidy reads them so; clang 14 cannot read LibTorch as C++20).
  const std::string_view bias = "bias";
  if (name.size() >= bias.size() && name.compare(name.size() - bias.size(), bias.size(), bias) == 0) {
    return config::ParameterKind::kBias;
  }
  if (name.find("_emb.") != std::string::npos) return config::ParameterKind::kEmbedding;
  for (const char* norm : {"ln1.", "ln2.", "ln_f.", "emb_ln.", "mlm.ln."}) {
    if (name.find(norm) != std::string::npos) return config::ParameterKind::kNorm;
  }
  return config::ParameterKind::kWeight;
}

std::shared_ptr<LanguageModel> make_model(const config::ModelConfig& config, std::int64_t vocab_size) {
  refuse_model_beyond_memory(config, vocab_size);  // before LibTorch allocates any of it
  switch (config.kind) {
    case config::ModelKind::kGpt: return make_gpt(config, vocab_size);
    case config::ModelKind::kBert: return make_bert(config, vocab_size);
    case config::ModelKind::kMlp: return make_mlp_lm(config, vocab_size);
    case config::ModelKind::kLlama: return make_llama(config, vocab_size);
  }
  throw std::invalid_argument("model.kind: a kind make_model does not build");
}

}  // namespace hpctrain::model
