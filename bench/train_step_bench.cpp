// train_step_bench: hpctrain's training step on one rank, timed the way
// bench/reference/bench_pytorch.py times PyTorch eager, so the two compare
// like for like at any GPT shape: a fresh random batch per step (drawn up
// front), then gradients reset, forward, loss, backward, clipping at 1.0 (which
// PyTorch's loop does not do) and AdamW. Prints one JSON line with tokens/s
// over the timed steps, the median step time, the step's FLOPs (6N plus attention, as the trainer
// counts them) and MFU against the fp32 matmul peak measured in the same run.
//
//   build/bench/train_step_bench --layers 12 --d-model 768 --heads 12 --vocab 50304 --batch 4 --seq 128
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include "config/experiment.h"
#include "model/language_model.h"
#include "runtime/allocator.h"
#include "runtime/sgemm_peak.h"
#include "runtime/threads.h"
#include "train/grad_clip.h"
#include "train/optimizer.h"

int main(int argc, char** argv) {
  CLI::App app{"hpctrain's training step on random tokens (compare bench/reference/bench_pytorch.py)"};
  hpctrain::config::Experiment e;
  e.model.kind = "gpt";
  e.model.max_seq_len = 256;
  std::int64_t vocab = 8192;
  std::int64_t batch = 8;
  int threads = 2;
  int steps = 10;
  int warmup = 2;
  app.add_option("--layers", e.model.n_layer);
  app.add_option("--d-model", e.model.d_model);
  app.add_option("--heads", e.model.n_head);
  app.add_option("--vocab", vocab);
  app.add_option("--batch", batch);
  app.add_option("--seq", e.model.max_seq_len);
  app.add_option("--threads", threads);
  app.add_option("--steps", steps)->check(CLI::Range(1, 100000));
  app.add_option("--warmup", warmup)->check(CLI::Range(0, 100000));
  CLI11_PARSE(app, argc, argv);

  const std::string heap = hpctrain::runtime::keep_freed_memory(hpctrain::cluster::Environment::current());
  hpctrain::runtime::apply_threads(threads);
  const double peak = hpctrain::runtime::measure_sgemm_peak();
  torch::manual_seed(0);
  const auto model = hpctrain::model::make_model(e.model, vocab);
  const auto optimizer = hpctrain::train::make_optimizer(*model, e.optimizer);
  const std::int64_t t = e.model.max_seq_len;
  std::vector<torch::Tensor> batches;
  for (int i = 0; i < warmup + steps; ++i) batches.push_back(torch::randint(vocab, {batch, t + 1}));

  using Clock = std::chrono::steady_clock;
  std::vector<double> step_seconds;
  double loss = 0;
  for (int i = 0; i < warmup + steps; ++i) {
    const auto start = Clock::now();
    for (auto& p : model->parameters()) p.mutable_grad().reset();
    const auto& b = batches[static_cast<std::size_t>(i)];
    const torch::Tensor l = model->loss(b.narrow(1, 0, t).contiguous(), b.narrow(1, 1, t).contiguous());
    l.backward();
    loss = l.item<double>();
    hpctrain::train::adamw_step(*optimizer, hpctrain::train::grad_clip(model->parameters(), 1.0).scale);
    if (i >= warmup) step_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  const double tokens_per_s =
      static_cast<double>(batch * t * steps) / std::accumulate(step_seconds.begin(), step_seconds.end(), 0.0);
  // The median as Python's statistics.median takes it (bench_pytorch.py's).
  std::sort(step_seconds.begin(), step_seconds.end());
  const std::size_t mid = step_seconds.size() / 2;
  const double step_ms_median =
      1e3 * (step_seconds.size() % 2 == 1 ? step_seconds[mid] : (step_seconds[mid - 1] + step_seconds[mid]) / 2);
  const double flops_per_token = model->flops_per_token(t);
  std::printf(
      "{\"layers\": %lld, \"d_model\": %lld, \"heads\": %lld, \"vocab\": %lld, \"batch\": %lld, \"seq\": %lld, "
      "\"params\": %lld, \"threads\": %d, \"steps\": %d, \"tokens_per_s\": %.1f, \"step_ms_median\": %.2f, "
      "\"flops_per_token\": %.0f, "
      "\"achieved_gflops\": %.2f, \"sgemm_peak_gflops\": %.2f, \"mfu\": %.4f, \"final_loss\": %.4f, \"heap\": "
      "\"%s\"}\n",
      static_cast<long long>(e.model.n_layer), static_cast<long long>(e.model.d_model),
      static_cast<long long>(e.model.n_head), static_cast<long long>(vocab), static_cast<long long>(batch),
      static_cast<long long>(t), static_cast<long long>(model->parameter_count()), threads, steps, tokens_per_s,
      step_ms_median, flops_per_token, tokens_per_s * flops_per_token / 1e9, peak / 1e9,
      tokens_per_s * flops_per_token / peak, loss, heap.c_str());
}
