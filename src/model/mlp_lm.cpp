// The MLP language model (the smallest of the three): each position predicts the next token from
// its own embedding alone (no context mixing), with exact (erf) GELUs.
#include <torch/nn/functional/activation.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "model/models.h"

namespace hpctrain::model {
namespace {

namespace F = torch::nn::functional;

class MlpLM : public LanguageModel {
 public:
  MlpLM(const config::ModelConfig& c, std::int64_t vocab) {
    tok_emb = register_module("tok_emb", torch::nn::Embedding(vocab, c.d_model));
    linear1 = register_module("linear1", torch::nn::Linear(c.d_model, 4 * c.d_model));
    linear2 = register_module("linear2", torch::nn::Linear(4 * c.d_model, c.d_model));
    linear_out = register_module("linear_out", torch::nn::Linear(c.d_model, vocab));
    torch::NoGradGuard no_grad;
    for (auto& item : named_parameters()) {
      const std::string& name = item.key();
      torch::Tensor& p = item.value();
      if (name.find("bias") != std::string::npos) {
        p.zero_();
      } else {
        p.normal_(0.0, c.init_std);
      }
    }
  }

  torch::Tensor forward(const torch::Tensor& tokens) override {
    torch::Tensor x = F::gelu(linear1(tok_emb(tokens)));
    return linear_out(F::gelu(linear2(x)));
  }

  [[nodiscard]] Objective objective() const override { return Objective::kCausal; }
  [[nodiscard]] double flops_per_token(std::int64_t /*seq_len*/) const override {
    return 6.0 * static_cast<double>(parameter_count());
  }

 private:
  torch::nn::Embedding tok_emb{nullptr};
  torch::nn::Linear linear1{nullptr}, linear2{nullptr}, linear_out{nullptr};
};

}  // namespace

std::shared_ptr<LanguageModel> make_mlp_lm(const config::ModelConfig& config, std::int64_t vocab_size) {
  return std::make_shared<MlpLM>(config, vocab_size);
}

}  // namespace hpctrain::model
