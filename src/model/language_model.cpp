#include "model/language_model.h"

#include <torch/torch.h>

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

std::shared_ptr<LanguageModel> make_model(const config::ModelConfig& config, std::int64_t vocab_size) {
  if (config.kind == "gpt") return make_gpt(config, vocab_size);
  if (config.kind == "bert") return make_bert(config, vocab_size);
  return make_mlp_lm(config, vocab_size);
}

}  // namespace hpctrain::model
