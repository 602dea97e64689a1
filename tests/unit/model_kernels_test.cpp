// The CPU kernels that replace ATen compositions in the models, against those
// compositions: head-parallel, block-causal attention, the exponential form
// of GELU and the loss's row kernel, values and gradients.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/attention_core.h"
#include "model/cross_entropy_row.h"
#include "model/gelu_tanh.h"

namespace hpctrain::model {
namespace {

struct Result {
  at::Tensor y, dqkv;
};

// qkv: [B, T, 3d] with H heads. The plain composition when `plain`, else
// attention_core (blocks of `rows`).
Result attention(const at::Tensor& qkv, std::int64_t n_head, const at::Tensor& dy, bool causal, bool plain,
                 std::int64_t rows = 0) {
  const at::Tensor x = qkv.clone().requires_grad_();
  const auto b = qkv.size(0), t = qkv.size(1), d = qkv.size(2) / 3, hd = d / n_head;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  at::Tensor y;
  if (plain) {
    const auto parts = x.view({b, t, 3, n_head, hd}).permute({2, 0, 3, 1, 4});  // [3, B, H, T, hd]
    at::Tensor scores = torch::matmul(parts[0], parts[1].transpose(-1, -2)) * scale;
    if (causal) {
      scores = scores.masked_fill(torch::ones({t, t}, torch::kBool).triu(1), -std::numeric_limits<double>::infinity());
    }
    y = torch::matmul(torch::softmax(scores, -1), parts[2]).permute({0, 2, 1, 3}).reshape({b, t, d});
  } else {
    y = attention_core(x, n_head, causal, scale, rows);
  }
  y.backward(dy);
  return {y.detach(), x.grad()};
}

void expect_close(const at::Tensor& got, const at::Tensor& want, const char* what) {
  const double error = (got - want).norm().item<double>() / want.norm().item<double>();
  EXPECT_LT(error, 1e-6) << what;
}

class AttentionCore : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(AttentionCore, CausalBlocksMatchTheMaskedComposition) {
  torch::manual_seed(5);
  const std::int64_t t = 37, d = 24;
  const at::Tensor qkv = torch::randn({2, t, 3 * d}), dy = torch::randn({2, t, d});
  const Result want = attention(qkv, 3, dy, /*causal=*/true, /*plain=*/true);
  const Result got = attention(qkv, 3, dy, /*causal=*/true, /*plain=*/false, GetParam());
  expect_close(got.y, want.y, "y");
  expect_close(got.dqkv, want.dqkv, "dqkv");
  // Position 0 sees only itself, whichever block it falls in: its output is its v.
  EXPECT_TRUE(torch::allclose(got.y.select(1, 0), qkv.select(1, 0).narrow(1, 2 * d, d)));
}

// 1: every row a block; 7: a short last block; 37 and more: one block.
INSTANTIATE_TEST_SUITE_P(QueryRows, AttentionCore, ::testing::Values(1, 7, 36, 37, 64));

TEST(AttentionCoreTest, BidirectionalMatchesTheComposition) {
  torch::manual_seed(6);
  const at::Tensor qkv = torch::randn({3, 70, 96}), dy = torch::randn({3, 70, 32});
  const Result want = attention(qkv, 2, dy, /*causal=*/false, /*plain=*/true);
  const Result got = attention(qkv, 2, dy, /*causal=*/false, /*plain=*/false, 7);
  expect_close(got.y, want.y, "y");
  expect_close(got.dqkv, want.dqkv, "dqkv");
}

TEST(GeluTanhTest, MatchesATenValuesAndGradientsAcrossTheRange) {
  // Saturated tails, the curved middle, tiny inputs, and zero.
  const at::Tensor x = torch::cat(
      {torch::linspace(-30, 30, 600001), torch::linspace(-1e-3, 1e-3, 1001), torch::tensor({-100.0F, 0.0F, 100.0F})});
  const at::Tensor dy = torch::rand_like(x) + 0.5;
  const at::Tensor ours = x.clone().requires_grad_(), aten = x.clone().requires_grad_();
  const at::Tensor y = gelu_tanh(ours);
  const at::Tensor want = torch::gelu(aten, "tanh");
  y.backward(dy);
  want.backward(dy);
  // Elementwise, relative to the value, with a floor relative to x: in the
  // negative tail ATen's tanh rounds to -1 and its GELU to 0 (x = -5 gives 0
  // where the exact value is -1.5e-7).
  const auto close = [&x](const at::Tensor& got, const at::Tensor& expected) {
    return ((got - expected).abs() <= 4e-6 * expected.abs() + 1e-6 * x.abs() + 1e-30).all().item<bool>();
  };
  EXPECT_TRUE(close(y.detach(), want.detach()));
  EXPECT_TRUE(close(ours.grad(), aten.grad()));
  // The same bound fails an error of 1e-5 relative.
  EXPECT_FALSE(close(want.detach() * (1 + 1e-5), want.detach()));
}

TEST(GeluTanhTest, NanPassesThrough) {
  const at::Tensor x = torch::tensor({std::numeric_limits<float>::quiet_NaN(), 1.0F}).requires_grad_();
  const at::Tensor y = gelu_tanh(x);
  y.sum().backward();
  EXPECT_TRUE(std::isnan(y[0].item<float>()));
  EXPECT_FALSE(std::isnan(y[1].item<float>()));
  EXPECT_TRUE(std::isnan(x.grad()[0].item<float>()));
}

// Row sizes around the 16 lanes and the 1024-element chunks, up to GPT-2's
// vocabulary, against log-softmax and softmax in double precision.
class CrossEntropyRow : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(CrossEntropyRow, MatchesDoublePrecisionLossAndGradient) {
  const std::int64_t size = GetParam();
  torch::manual_seed(size);
  for (const double spread : {1.0, 30.0}) {
    const at::Tensor logits = torch::randn({size}) * spread;
    const std::int64_t target = size / 3;
    const at::Tensor exact = logits.to(torch::kFloat64);
    const double want_loss = (exact.logsumexp(0) - exact[target]).item<double>();
    const float scale = 0.25F;
    at::Tensor want_grad = torch::softmax(exact, 0) * scale;
    want_grad[target] -= scale;

    at::Tensor row = logits.clone();
    const float loss = cross_entropy_row(row.data_ptr<float>(), size, target, scale, /*gradient=*/true);
    EXPECT_NEAR(loss, want_loss, 2e-6 * std::max(1.0, std::abs(want_loss))) << "spread " << spread;
    // Relative, but a one-logit row's gradient is exactly zero.
    EXPECT_LE((row.to(torch::kFloat64) - want_grad).norm().item<double>(), 1e-6 * want_grad.norm().item<double>())
        << "spread " << spread;

    at::Tensor untouched = logits.clone();
    EXPECT_EQ(cross_entropy_row(untouched.data_ptr<float>(), size, target, scale, /*gradient=*/false), loss);
  }
}
INSTANTIATE_TEST_SUITE_P(Sizes, CrossEntropyRow, ::testing::Values(1, 15, 16, 17, 1023, 1040, 8192, 50304));

TEST(CrossEntropyRowTest, NanLogitGivesNanLoss) {
  for (const std::int64_t at : {5, 35}) {  // in the lanes, in the tail
    at::Tensor row = torch::randn({40});
    row[at] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(cross_entropy_row(row.data_ptr<float>(), 40, 2, 1.0F, /*gradient=*/false))) << at;
  }
}

}  // namespace
}  // namespace hpctrain::model
