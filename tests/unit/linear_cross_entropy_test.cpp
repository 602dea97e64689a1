// The fused output layer + cross-entropy against the plain composition it
// replaces (logits, LibTorch's cross-entropy, autograd): loss and gradients.
#include "model/linear_cross_entropy.h"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cmath>
#include <stdexcept>

#include "model/language_model.h"

namespace hpctrain::model {
namespace {

struct Result {
  at::Tensor loss, d_hidden, d_weight, d_bias;
};

struct Inputs {
  at::Tensor hidden, weight, bias, targets;
};

Inputs make_inputs(bool with_bias, double ignored_fraction, std::int64_t vocab = 11) {
  torch::manual_seed(3);
  Inputs in;
  in.hidden = torch::randn({37, 8});
  in.weight = torch::randn({vocab, 8}) * 0.5;
  if (with_bias) in.bias = torch::randn({vocab});
  in.targets = torch::randint(vocab, {37}, torch::kInt64);
  in.targets.masked_fill_(torch::rand({37}) < ignored_fraction, -100);
  return in;
}

// fused = false: the plain composition; otherwise linear_cross_entropy with `rows` per block.
Result run(const Inputs& in, bool fused, std::int64_t rows = 0, double loss_scale = 1.0) {
  const at::Tensor h = in.hidden.clone().requires_grad_();
  const at::Tensor w = in.weight.clone().requires_grad_();
  const at::Tensor b = in.bias.defined() ? in.bias.clone().requires_grad_() : at::Tensor();
  at::Tensor loss;
  if (fused) {
    loss = linear_cross_entropy(h, w, b, in.targets, rows);
  } else {
    at::Tensor logits = torch::matmul(h, w.t());
    if (b.defined()) logits = logits + b;
    loss = language_model_loss(logits, in.targets);
  }
  (loss * loss_scale).backward();
  return {loss.detach(), h.grad(), w.grad(), b.defined() ? b.grad() : at::Tensor()};
}

void expect_close(const at::Tensor& ours, const at::Tensor& plain, const char* what) {
  ASSERT_TRUE(ours.defined()) << what;
  EXPECT_TRUE(torch::allclose(ours, plain, 1e-5, 1e-7))
      << what << ": max difference " << (ours - plain).abs().max().item<double>();
}

void expect_same_as_plain(const Inputs& in, std::int64_t rows, double loss_scale = 1.0) {
  const Result plain = run(in, false, 0, loss_scale);
  const Result fused = run(in, true, rows, loss_scale);
  expect_close(fused.loss, plain.loss, "loss");
  expect_close(fused.d_hidden, plain.d_hidden, "d hidden");
  expect_close(fused.d_weight, plain.d_weight, "d weight");
  if (in.bias.defined()) expect_close(fused.d_bias, plain.d_bias, "d bias");
}

TEST(LinearCrossEntropyTest, MatchesPlainLogitsAndCrossEntropyForEveryBlockSize) {
  for (const std::int64_t rows : {1, 5, 16, 37, 0}) {
    SCOPED_TRACE("rows per block " + std::to_string(rows));
    expect_same_as_plain(make_inputs(false, 0.0), rows);
  }
}

TEST(LinearCrossEntropyTest, IgnoredTargetsAndABiasAsInMaskedLm) {
  for (const std::int64_t rows : {3, 0}) {
    SCOPED_TRACE("rows per block " + std::to_string(rows));
    expect_same_as_plain(make_inputs(true, 0.7), rows);
  }
}

TEST(LinearCrossEntropyTest, AScaledLossScalesItsGradients) {
  // What training does: the loss divided by accumulation steps x ranks.
  expect_same_as_plain(make_inputs(true, 0.2), 4, 0.125);
}

TEST(LinearCrossEntropyTest, WithoutGradientsTheLossIsTheSame) {
  const Inputs in = make_inputs(true, 0.3);
  const Result plain = run(in, false);
  const torch::NoGradGuard no_grad;
  expect_close(linear_cross_entropy(in.hidden, in.weight, in.bias, in.targets, 6), plain.loss, "loss");
}

TEST(LinearCrossEntropyTest, AVocabularyWiderThanTheRowKernelsLanes) {
  // 53 logits a row: three 16-float lane groups and a tail.
  expect_same_as_plain(make_inputs(false, 0.0, 53), 8);
  expect_same_as_plain(make_inputs(true, 0.4, 53), 0);
}

TEST(LinearCrossEntropyTest, ATargetOutsideTheVocabularyIsAnError) {
  Inputs in = make_inputs(false, 0.0);
  in.targets[4] = 11;
  EXPECT_THROW(linear_cross_entropy(in.hidden, in.weight, in.bias, in.targets), std::out_of_range);
  in.targets[4] = -3;
  EXPECT_THROW(linear_cross_entropy(in.hidden, in.weight, in.bias, in.targets), std::out_of_range);
}

TEST(LinearCrossEntropyTest, NoTargetsGiveNanLikeLibTorch) {
  const Inputs in = make_inputs(false, 1.1);
  EXPECT_TRUE(std::isnan(run(in, false).loss.item<double>()));
  EXPECT_TRUE(std::isnan(run(in, true, 5).loss.item<double>()));
}

}  // namespace
}  // namespace hpctrain::model
