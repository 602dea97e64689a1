// The test oracle: hpctrain's models against the PyTorch reference
// (tests/reference/models.py) on identical weights and inputs. Logits, the
// training loss (LanguageModel::loss) and every parameter's gradient must
// agree to 1e-5 relative (L2 norm of the difference over the L2 norm of the
// reference, per tensor).
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <ostream>

#include "model/language_model.h"
#include "tensor_dir.h"

namespace hpctrain::testing {
namespace {
namespace fs = std::filesystem;

constexpr double kTolerance = 1e-5;

std::string nlohmann_meta(const config::ModelConfig& c, std::int64_t vocab) {
  return "{\"model\": \"" + std::string(config::name_of(c.kind)) + "\", \"vocab_size\": " + std::to_string(vocab) +
         ", \"max_seq_len\": " + std::to_string(c.max_seq_len) + ", \"n_layer\": " + std::to_string(c.n_layer) +
         ", \"n_head\": " + std::to_string(c.n_head) + ", \"d_model\": " + std::to_string(c.d_model) +
         ", \"n_kv_head\": " + std::to_string(c.n_kv_head) + ", \"d_ff\": " + std::to_string(c.d_ff) +
         ", \"rope_theta\": " + std::to_string(c.rope_theta) + ", \"norm_eps\": " + std::to_string(c.norm_eps) +
         ", \"tie_embeddings\": " + (c.tie_embeddings ? "true" : "false") + ", \"norm_position\": \"" +
         std::string(config::name_of(c.norm_position)) + "\"}";
}

double relative_error(const at::Tensor& ours, const at::Tensor& reference) {
  const double denom = reference.to(torch::kFloat64).norm().item<double>();
  const double diff = (ours.to(torch::kFloat64) - reference.to(torch::kFloat64)).norm().item<double>();
  return denom > 0 ? diff / denom : diff;
}

struct ModelCase {
  config::ModelKind kind;
  const char* name;
  bool tie_embeddings = false;                                      // llama
  config::NormPosition norm_position = config::NormPosition::kPre;  // bert
};

// GoogleTest prints the parameter in the test's name: its name, not its bytes.
void PrintTo(const ModelCase& model, std::ostream* os) { *os << model.name; }

class ReferenceCheck : public ::testing::TestWithParam<ModelCase> {
 protected:
  fs::path work_ = fs::temp_directory_path() / ("hpctrain-reference-" + std::to_string(getpid()));
  ~ReferenceCheck() override { fs::remove_all(work_); }
};

TEST_P(ReferenceCheck, LogitsLossAndEveryGradientMatchPyTorch) {
  torch::set_num_threads(1);
  config::ModelConfig c;
  c.kind = GetParam().kind;
  c.n_layer = 2;
  c.n_head = 4;
  c.d_model = 32;
  c.max_seq_len = 16;
  if (c.kind == config::ModelKind::kLlama) {
    // Grouped-query attention (two query heads per key/value head), a SwiGLU
    // width that is no multiple of d_model, and RoPE and RMSNorm constants
    // away from their defaults, so that each has to be read and used.
    c.n_kv_head = 2;
    c.d_ff = 48;
    c.rope_theta = 500.0;
    c.norm_eps = 1e-5;
    c.tie_embeddings = GetParam().tie_embeddings;
  }
  c.norm_position = GetParam().norm_position;
  const std::int64_t vocab = 50, batch = 3, t = 12;
  torch::manual_seed(7);
  const auto model = model::make_model(c, vocab);
  // Non-trivial norms and biases, so their gradients are exercised too.
  {
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters()) p.add_(torch::randn_like(p) * 0.05);
  }
  const at::Tensor tokens = torch::randint(vocab, {batch, t}, torch::kInt64);
  at::Tensor targets = torch::randint(vocab, {batch, t}, torch::kInt64);
  if (c.kind == config::ModelKind::kBert) targets.masked_fill_(torch::rand({batch, t}) > 0.3, -100);

  const at::Tensor logits = model->forward(tokens).detach();
  // The loss and gradients training uses (for the transformers, the fused
  // output layer and cross-entropy), against PyTorch's plain logits + loss.
  const at::Tensor loss = model->loss(tokens, targets);
  loss.backward();

  TensorDir in;
  in.meta_json = nlohmann_meta(c, vocab);
  for (const auto& item : model->named_parameters()) in.tensors.emplace("param." + item.key(), item.value());
  in.tensors.emplace("tokens", tokens);
  in.tensors.emplace("targets", targets);
  write_tensor_dir(work_ / "in", in);

  const std::string command = std::string(HPCTRAIN_SYSTEM_PYTHON) + " " + HPCTRAIN_REFERENCE_DIR + "/check.py " +
                              (work_ / "in").string() + " " + (work_ / "out").string();
  ASSERT_EQ(std::system(command.c_str()), 0) << command;  // NOLINT(concurrency-mt-unsafe): single-threaded test
  const TensorDir out = read_tensor_dir(work_ / "out");

  const double logits_error = relative_error(logits, out.tensors.at("logits"));
  const double loss_error = relative_error(loss, out.tensors.at("loss"));
  EXPECT_LE(logits_error, kTolerance);
  EXPECT_LE(loss_error, kTolerance) << loss.item<double>() << " vs " << out.tensors.at("loss").item<double>();
  std::size_t checked = 0;
  double worst_gradient = 0;
  for (const auto& item : model->named_parameters()) {
    const auto it = out.tensors.find("grad." + item.key());
    ASSERT_NE(it, out.tensors.end()) << "the reference has no gradient for " << item.key();
    const double error = relative_error(item.value().grad(), it->second);
    EXPECT_LE(error, kTolerance) << item.key();
    worst_gradient = std::max(worst_gradient, error);
    ++checked;
  }
  EXPECT_EQ(checked, model->named_parameters().size());
  // A negative control: the same check on weights off by 0.1% must fail it, or
  // the comparison above proves nothing.
  TensorDir perturbed = in;
  perturbed.tensors["param.tok_emb.weight"] = in.tensors.at("param.tok_emb.weight") * 1.001;
  write_tensor_dir(work_ / "in-perturbed", perturbed);
  const std::string control = std::string(HPCTRAIN_SYSTEM_PYTHON) + " " + HPCTRAIN_REFERENCE_DIR + "/check.py " +
                              (work_ / "in-perturbed").string() + " " + (work_ / "out-perturbed").string();
  ASSERT_EQ(std::system(control.c_str()), 0) << control;  // NOLINT(concurrency-mt-unsafe): single-threaded test
  EXPECT_GT(relative_error(logits, read_tensor_dir(work_ / "out-perturbed").tensors.at("logits")), kTolerance);

  std::printf("%s: logits %.2e, loss %.2e, worst of %zu gradients %.2e (relative; bound %.0e)\n", GetParam().name,
              logits_error, loss_error, checked, worst_gradient, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Models, ReferenceCheck,
    ::testing::Values(ModelCase{config::ModelKind::kGpt, "gpt"}, ModelCase{config::ModelKind::kBert, "bert"},
                      ModelCase{config::ModelKind::kMlp, "mlp"}, ModelCase{config::ModelKind::kLlama, "llama"},
                      ModelCase{config::ModelKind::kLlama, "llama_tied", true},
                      ModelCase{config::ModelKind::kBert, "bert_post", false, config::NormPosition::kPost}),
    [](const ::testing::TestParamInfo<ModelCase>& model) { return std::string(model.param.name); });

}  // namespace
}  // namespace hpctrain::testing
