// Sampling (train/generate.h) ends where the model ends the document: at
// </s>, not at the token budget, since what a model writes after </s> is the
// start of another, unrelated document.
#include "train/generate.h"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "data/documents.h"
#include "data/tokenizer.h"
#include "model/language_model.h"

namespace hpctrain::train {
namespace {

// Writes the token of `script` at the window's length (1: the </s> alone),
// the last one ever after: a model with no randomness left at temperature 1.
class ScriptedModel : public model::LanguageModel {
 public:
  ScriptedModel(std::int64_t vocab, std::vector<int> script) : vocab_(vocab), script_(std::move(script)) {
    register_parameter("unused", torch::zeros({1}));
  }
  at::Tensor forward(const at::Tensor& tokens) override {
    const std::int64_t t = tokens.size(1);
    const auto position = static_cast<std::size_t>(std::min(t, static_cast<std::int64_t>(script_.size())) - 1);
    at::Tensor logits = torch::zeros({1, t, vocab_});
    logits[0][t - 1][script_[position]] = 1000.0;
    return logits;
  }
  [[nodiscard]] model::Objective objective() const override { return model::Objective::kCausal; }
  [[nodiscard]] double flops_per_token(std::int64_t /*seq_len*/) const override { return 0; }

 private:
  std::int64_t vocab_;
  std::vector<int> script_;
};

data::Tokenizer tiny_tokenizer() {
  const std::vector<data::Document> documents(200, data::Document{"alpha beta gamma delta\nbeta alpha\n", "doc"});
  return data::Tokenizer::train(documents, {config::TokenizerKind::kBpe, 300, 1000, 1});
}

TEST(Generate, StopsWhereTheModelEndsTheDocument) {
  const data::Tokenizer tokenizer = tiny_tokenizer();
  const int alpha = tokenizer.encode("alpha").front(), beta = tokenizer.encode("beta").front();
  ASSERT_EQ(tokenizer.decode({alpha}), "alpha");
  ASSERT_EQ(tokenizer.decode({beta}), "beta");
  // alpha, alpha, </s>, then beta for as long as sampling goes on.
  ScriptedModel ends(tokenizer.vocab_size(), {alpha, alpha, data::Tokenizer::kEos, beta});
  EXPECT_EQ(generate(ends, tokenizer, "", 20, 1.0, 0, 64, 1), "alphaalpha");
  // A model that never writes </s> gets the whole budget.
  ScriptedModel goes_on(tokenizer.vocab_size(), {alpha, beta});
  std::string expected = "alpha";
  for (int i = 1; i < 20; ++i) expected += "beta";
  EXPECT_EQ(generate(goes_on, tokenizer, "", 20, 1.0, 0, 64, 1), expected);
}

}  // namespace
}  // namespace hpctrain::train
