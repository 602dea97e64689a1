// kernel_choice_bench: hpctrain's own CPU kernels against the ones LibTorch 2.x
// offers in their place, so each build keeps the faster. Two contests, each at
// the quickstart's shape and at the GPT-2-small shape, fp32, alternated round
// by round in one run:
//   attention  model::attention_core on the qkv projection's output, forward
//              and backward, against at::scaled_dot_product_attention
//              (is_causal) on the q, k, v views a PyTorch GPT takes of it;
//   AdamW      optim::adamw_step (the trainer's step) against LibTorch's
//              torch::optim::AdamW::step, at::_fused_adamw_ (PyTorch's
//              fused=True) and the _foreach_ composition of PyTorch's
//              foreach=True, over the parameters of hpctrain's GPT.
// Before timing, each contender's result is compared with hpctrain's (the
// largest difference is printed), so the race is between equal answers.
// LibTorch before 2.4 lacks the fused CPU AdamW and (before 2.0) SDPA: there
// only hpctrain and torch::optim::AdamW run.
//
//   build/bench/kernel_choice_bench --threads 2 --rounds 5
#include <ATen/Parallel.h>
#include <torch/optim/adamw.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "model/attention_core.h"
#include "model/language_model.h"
#include "optim/optimizer.h"

#define HPCTRAIN_HAS_TORCH_2_4 (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

namespace {

using Clock = std::chrono::steady_clock;

struct Shape {
  const char* name;
  std::int64_t layers, d_model, heads, vocab, batch, seq;
};

constexpr Shape kShapes[] = {
    {"quickstart  L4 d128 H4 V4096 B8 T256", 4, 128, 4, 4096, 8, 256},
    {"GPT-2-small L12 d768 H12 V50304 B4 T128", 12, 768, 12, 50304, 4, 128},
};

struct Contender {
  std::string name;
  std::function<void()> run;  // one timed repetition
};

double seconds(const std::function<void()>& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

// Runs every contender once per round, the order rotating each round, after
// one untimed warm-up each; prints each one's median time and its ratio to the
// first (hpctrain's), both taken round by round.
void race(const char* contest, const char* shape, std::vector<Contender>& contenders, int rounds) {
  for (auto& c : contenders) c.run();
  const std::size_t n = contenders.size();
  std::vector<std::vector<double>> times(n);  // times[contender][round]
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t which = (i + static_cast<std::size_t>(r)) % n;
      times[which].push_back(seconds(contenders[which].run));
    }
  }
  for (std::size_t c = 0; c < n; ++c) {
    std::vector<double> ratios;
    for (int r = 0; r < rounds; ++r) ratios.push_back(times[0][r] / times[c][r]);
    std::printf("%-9s %-40s %-34s %9.2f ms  %6.3f\n", contest, shape, contenders[c].name.c_str(),
                1e3 * median(times[c]), median(ratios));
  }
}

// attention -------------------------------------------------------------

#if TORCH_VERSION_MAJOR >= 2
at::Tensor sdpa(const at::Tensor& qkv, std::int64_t heads) {
  const auto b = qkv.size(0), t = qkv.size(1), d = qkv.size(2) / 3;
  const auto parts = qkv.split(d, 2);
  const auto head_view = [&](const at::Tensor& x) { return x.view({b, t, heads, d / heads}).transpose(1, 2); };
  return at::scaled_dot_product_attention(head_view(parts[0]), head_view(parts[1]), head_view(parts[2]), {}, 0.0, true)
      .transpose(1, 2)
      .reshape({b, t, d});
}
#endif

void attention_contest(const Shape& s, int rounds, std::int64_t query_rows) {
  torch::manual_seed(0);
  const auto d = s.d_model, hd = d / s.heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const auto qkv = torch::randn({s.batch, s.seq, 3 * d}).requires_grad_(true);
  const auto dout = torch::randn({s.batch, s.seq, d});
  using Attention = std::function<at::Tensor(const at::Tensor&)>;
  const auto forward_backward = [&](const Attention& f) {
    qkv.mutable_grad() = torch::Tensor();
    f(qkv).backward(dout);
  };
  const Attention ours = [&](const at::Tensor& x) {
    return hpctrain::model::attention_core(x, s.heads, true, scale, query_rows);
  };
  std::vector<Contender> contenders{{"hpctrain attention_core", [&] { forward_backward(ours); }}};
#if TORCH_VERSION_MAJOR >= 2
  const Attention theirs = [&](const at::Tensor& x) { return sdpa(x, s.heads); };
  {
    forward_backward(ours);
    const auto out = ours(qkv).detach();
    const auto grad = qkv.grad().clone();
    forward_backward(theirs);
    std::printf("# %s: SDPA against attention_core: max |out diff| %.2e, max |grad diff| %.2e\n", s.name,
                (theirs(qkv).detach() - out).abs().max().item<double>(),
                (qkv.grad() - grad).abs().max().item<double>());
  }
  contenders.push_back({"at::scaled_dot_product_attention", [&] { forward_backward(theirs); }});
#endif
  race("attention", s.name, contenders, rounds);
}

// AdamW -----------------------------------------------------------------

constexpr double kLr = 3e-4, kBeta1 = 0.9, kBeta2 = 0.95, kEps = 1e-8, kWeightDecay = 0.1;

// One AdamW over its own copy of the parameters, with fixed gradients.
struct AdamwSubject {
  std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  std::unique_ptr<torch::optim::AdamW> optimizer;  // hpctrain's and LibTorch's steps
  std::int64_t step = 0;

  AdamwSubject(const std::vector<torch::Tensor>& p0, const std::vector<torch::Tensor>& g0) {
    for (std::size_t i = 0; i < p0.size(); ++i) {
      params.push_back(p0[i].clone());
      params.back().mutable_grad() = g0[i].clone();
      grads.push_back(params.back().grad());
      exp_avgs.push_back(torch::zeros_like(p0[i]));
      exp_avg_sqs.push_back(torch::zeros_like(p0[i]));
      steps.push_back(torch::zeros({}, torch::kFloat32));
    }
    optimizer = std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(kLr).betas({kBeta1, kBeta2}).eps(kEps).weight_decay(kWeightDecay));
  }

#if HPCTRAIN_HAS_TORCH_2_4
  void fused() {
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, {}, steps, kLr, kBeta1, kBeta2, kWeightDecay, kEps, false,
                      false);
  }

  // PyTorch's _multi_tensor_adamw, for a float lr and no amsgrad.
  void foreach () {
    ++step;
    const double bias1 = 1 - std::pow(kBeta1, static_cast<double>(step));
    const double bias2_sqrt = std::sqrt(1 - std::pow(kBeta2, static_cast<double>(step)));
    at::_foreach_mul_(params, 1 - kLr * kWeightDecay);
    at::_foreach_lerp_(exp_avgs, grads, 1 - kBeta1);
    at::_foreach_mul_(exp_avg_sqs, kBeta2);
    at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - kBeta2);
    auto denom = at::_foreach_sqrt(exp_avg_sqs);
    at::_foreach_div_(denom, bias2_sqrt);
    at::_foreach_add_(denom, kEps);
    at::_foreach_addcdiv_(params, exp_avgs, denom, -kLr / bias1);
  }
#endif
};

double max_difference(const AdamwSubject& a, const AdamwSubject& b) {
  double out = 0;
  for (std::size_t i = 0; i < a.params.size(); ++i) {
    out = std::max(out, (a.params[i] - b.params[i]).abs().max().item<double>());
  }
  return out;
}

void adamw_contest(const Shape& s, int rounds) {
  torch::manual_seed(0);
  // The parameters of hpctrain's own GPT at this shape, as the trainer steps them.
  hpctrain::config::ModelConfig config;
  config.n_layer = s.layers;
  config.n_head = s.heads;
  config.d_model = s.d_model;
  config.max_seq_len = s.seq;
  std::vector<torch::Tensor> p0, g0;
  for (const auto& p : hpctrain::model::make_model(config, s.vocab)->parameters()) {
    p0.push_back(p.detach().clone());
    g0.push_back(torch::randn_like(p0.back()) * 1e-3);
  }
  torch::NoGradGuard no_grad;
  AdamwSubject ours(p0, g0), libtorch(p0, g0);
  std::vector<Contender> contenders{
      {"hpctrain adamw_step", [&] { hpctrain::optim::adamw_step(*ours.optimizer); }},
      {"torch::optim::AdamW::step", [&] { libtorch.optimizer->step(); }},
  };
#if HPCTRAIN_HAS_TORCH_2_4
  AdamwSubject fused(p0, g0), foreach (p0, g0);
  contenders.push_back({"at::_fused_adamw_ (fused=True)", [&] { fused.fused(); }});
  contenders.push_back({"_foreach_ ops (foreach=True)", [&] {
                          foreach
                            .foreach ();
                        }});
#endif
  // Three steps each from the same start, then compare with hpctrain's.
  for (int i = 0; i < 3; ++i) {
    for (auto& c : contenders) c.run();
  }
  std::int64_t count = 0;
  for (const auto& p : p0) count += p.numel();
  std::printf("# %s: %lld parameters in %zu tensors; after 3 steps, max |param diff| against hpctrain: LibTorch %.2e",
              s.name, static_cast<long long>(count), p0.size(), max_difference(ours, libtorch));
#if HPCTRAIN_HAS_TORCH_2_4
  std::printf(", fused %.2e, foreach %.2e", max_difference(ours, fused), max_difference(ours, foreach));
#endif
  std::printf("\n");
  race("AdamW", s.name, contenders, rounds);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hpctrain's CPU attention and AdamW against LibTorch 2.x's (SDPA, fused and foreach AdamW)"};
  int threads = 2;
  int rounds = 5;
  std::int64_t query_rows = 0;
  app.add_option("--threads", threads)->check(CLI::Range(1, 1024));
  app.add_option("--rounds", rounds)->check(CLI::Range(1, 1000));
  app.add_option("--query-rows", query_rows, "attention_core's query rows per block (0: its default)")
      ->check(CLI::Range(0, 1 << 20));
  CLI11_PARSE(app, argc, argv);
  at::set_num_threads(threads);
  std::printf(
      "# LibTorch %s, %d threads, fp32, %d alternated rounds; ratio = hpctrain's time / this one's "
      "(below 1: hpctrain is faster), the median of the rounds' ratios\n",
      TORCH_VERSION, threads, rounds);
  std::printf("%-9s %-40s %-34s %12s  %6s\n", "contest", "shape", "contender", "median", "ratio");
  for (const auto& s : kShapes) attention_contest(s, rounds, query_rows);
  for (const auto& s : kShapes) adamw_contest(s, rounds);
}
