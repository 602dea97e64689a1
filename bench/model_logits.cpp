// model_logits: a trained transformer's (gpt, llama: next-token; bert: the MLM head's at every
// position) logits for one batch of random tokens, on a
// chosen device and precision, written as a tensor directory
// (tests/reference/tensor_dir.h: `tokens` [B, T] int64, `logits` [B, T, V]
// float32, and the model's shape in its meta) for
// tests/reference/compare_logits.py, which computes the same logits with
// PyTorch from the run's weights exported through safetensors
// (`hpctrain ckpt export`). The tokens come from a CPU generator seeded with
// --seed, so a rerun draws the same batch.
//
//   build/bench/model_logits runs/quickstart logits/ --device cuda --precision bf16
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cstdint>
#include <exception>
#include <string>

#include "config/experiment.h"
#include "tensor_dir.h"
#include "train/autocast.h"
#include "train/trained_model.h"

int main(int argc, char** argv) {
  CLI::App app{"a trained model's logits for one batch (compare tests/reference/compare_logits.py)"};
  std::string run;
  std::string out;
  std::string device = "cpu";
  std::string precision = "fp32";
  std::int64_t batch = 4;
  std::int64_t seq = 64;
  std::uint64_t seed = 1;
  app.add_option("run", run, "run directory or checkpoint file")->required();
  app.add_option("out", out, "tensor directory to write")->required();
  app.add_option("--device", device)->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--precision", precision)->check(CLI::IsMember({"fp32", "bf16"}));
  app.add_option("--batch", batch)->check(CLI::Range(1, 1024));
  app.add_option("--seq", seq)->check(CLI::Range(1, 1 << 20));
  app.add_option("--seed", seed);
  CLI11_PARSE(app, argc, argv);
  try {
    namespace config = hpctrain::config;
    auto trained = hpctrain::train::load_trained_model(run, {}, [](const auto&) {});
    const auto& m = trained.experiment.model;
    if (m.kind == config::ModelKind::kMlp) {
      throw std::runtime_error(fmt::format("{}: an mlp model; model_logits reads gpt, llama and bert", run));
    }
    if (seq > m.max_seq_len) throw std::runtime_error(fmt::format("--seq {} > max_seq_len {}", seq, m.max_seq_len));
    auto& model = *trained.model;
    const std::int64_t vocab = model.named_parameters()["tok_emb.weight"].size(0);

    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    const at::Tensor tokens = torch::randint(vocab, {batch, seq}, generator, torch::kInt64);
    const torch::Device on(device == "cuda" ? torch::kCUDA : torch::kCPU);
    model.to(on);
    model.eval();
    at::Tensor logits;
    {
      torch::NoGradGuard no_grad;
      const hpctrain::train::AutocastGuard autocast(precision == "bf16", on.is_cuda());
      logits = model.forward(tokens.to(on)).to(torch::kFloat32).cpu();
    }
    hpctrain::testing::TensorDir dir;
    dir.tensors = {{"tokens", tokens}, {"logits", logits}};
    nlohmann::json meta = {{"model", config::name_of(m.kind)},
                           {"vocab_size", vocab},
                           {"max_seq_len", m.max_seq_len},
                           {"n_layer", m.n_layer},
                           {"n_head", m.n_head},
                           {"d_model", m.d_model},
                           {"device", device},
                           {"precision", precision},
                           {"checkpoint", trained.checkpoint.filename().string()},
                           {"step", trained.info.step}};
    if (m.kind == config::ModelKind::kLlama) {
      meta.update({{"n_kv_head", m.n_kv_head},
                   {"d_ff", m.d_ff},
                   {"rope_theta", m.rope_theta},
                   {"norm_eps", m.norm_eps},
                   {"tie_embeddings", m.tie_embeddings}});
    }
    if (m.kind == config::ModelKind::kBert) meta["norm_position"] = config::name_of(m.norm_position);
    dir.meta_json = meta.dump();
    hpctrain::testing::write_tensor_dir(out, dir);
    fmt::print("model_logits: {} step {}, logits [{}, {}, {}] on {} in {} -> {}\n", trained.checkpoint.string(),
               trained.info.step, batch, seq, vocab, device, precision, out);
  } catch (const std::exception& e) {
    fmt::print(stderr, "model_logits: {}\n", e.what());
    return 1;
  }
}
