// train_step_bench: hpctrain's training step on one rank, timed the way
// bench/bench_pytorch.py times PyTorch eager, so the two compare
// like for like at any GPT shape. The step is the trainer's own
// (train::Trainer::train_step: gradients reset, forward, loss, backward,
// clipping at 1.0, which PyTorch's loop does not do, and AdamW), on a fresh
// batch of random tokens each step, so a bench number is a training number.
// Prints one JSON line with tokens/s over the timed steps, the median step
// time, the FLOPs per token and MFU (train/throughput.h) against the fp32
// matmul peak measured in the same run. With --device cuda --precision bf16
// the step runs on the GPU under bf16 autocast and the peak is the bf16 one
// measured there (bench/gpu-proof.sh); on a GPU the loss is read back each
// step, so a step's time ends when its kernels have.
//
//   build/bench/train_step_bench --layers 12 --d-model 768 --heads 12 --vocab 50304 --batch 4 --seq 128
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "cluster/environment.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "handles/mpi.h"
#include "train/throughput.h"
#include "train/trainer.h"
#include "train/training_data.h"

int main(int argc, char** argv) {
  CLI::App app{"hpctrain's training step on random tokens (compare bench/bench_pytorch.py)"};
  hpctrain::config::Experiment e;
  e.model.kind = hpctrain::config::ModelKind::kGpt;
  e.data.seq_len = 256;
  std::int64_t vocab = 8192;
  std::int64_t batch = 8;
  int threads = 2;
  int steps = 10;
  int warmup = 2;
  std::string device = "cpu";
  std::string precision = "fp32";
  app.add_option("--layers", e.model.n_layer);
  app.add_option("--d-model", e.model.d_model);
  app.add_option("--heads", e.model.n_head);
  app.add_option("--vocab", vocab);
  app.add_option("--batch", batch);
  app.add_option("--seq", e.data.seq_len);
  app.add_option("--threads", threads);
  app.add_option("--steps", steps)->check(CLI::Range(1, 100000));
  app.add_option("--warmup", warmup)->check(CLI::Range(0, 100000));
  app.add_option("--device", device)->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--precision", precision)->check(CLI::IsMember({"fp32", "bf16"}));
  CLI11_PARSE(app, argc, argv);

  const auto run_dir = std::filesystem::temp_directory_path() / ("train-step-bench-" + std::to_string(getpid()));
  e.job.run_dir = run_dir.string();
  e.model.max_seq_len = e.data.seq_len;
  e.training.steps = warmup + steps;
  e.training.batch_size = batch;
  e.training.micro_batch_size = batch;
  e.training.threads = threads;
  e.training.device = device == "cuda" ? hpctrain::config::Device::kCuda : hpctrain::config::Device::kCpu;
  e.training.precision = precision == "bf16" ? hpctrain::config::Precision::kBf16 : hpctrain::config::Precision::kFp32;
  e.eval.interval = 0;
  e.checkpoint.interval = 0;
  e.checkpoint.resume = hpctrain::config::ResumeMode::kNever;

  const auto env = hpctrain::cluster::Environment::current();
  hpctrain::handles::MpiRuntime mpi;
  hpctrain::comm::World world(mpi, env, hpctrain::comm::WorldOptions{});
  double tokens_per_s = 0;
  double step_ms_median = 0;
  double loss = 0;
  {
    hpctrain::train::Trainer trainer(
        e, world, env, {std::make_unique<hpctrain::train::RandomTokens>(vocab, e.data.seq_len, 0), vocab});
    using Clock = std::chrono::steady_clock;
    std::vector<double> step_seconds;
    for (int i = 0; i < warmup + steps; ++i) {
      const auto start = Clock::now();
      loss = trainer.train_step().loss;
      if (i >= warmup) step_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    tokens_per_s = hpctrain::train::tokens_per_second(static_cast<double>(batch * e.data.seq_len * steps),
                                                      std::accumulate(step_seconds.begin(), step_seconds.end(), 0.0));
    // The median as Python's statistics.median takes it (bench_pytorch.py's).
    std::sort(step_seconds.begin(), step_seconds.end());
    const std::size_t mid = step_seconds.size() / 2;
    step_ms_median =
        1e3 * (step_seconds.size() % 2 == 1 ? step_seconds[mid] : (step_seconds[mid - 1] + step_seconds[mid]) / 2);
    const double flops_per_token = trainer.flops_per_token();
    const double peak = trainer.peak_flops();
    std::printf(
        "{\"layers\": %lld, \"d_model\": %lld, \"heads\": %lld, \"vocab\": %lld, \"batch\": %lld, \"seq\": %lld, "
        "\"params\": %lld, \"device\": \"%s\", \"precision\": \"%s\", \"threads\": %d, \"steps\": %d, "
        "\"tokens_per_s\": %.1f, \"step_ms_median\": %.2f, "
        "\"flops_per_token\": %.0f, \"achieved_gflops\": %.2f, \"sgemm_peak_gflops\": %.2f, \"mfu\": %.4f, "
        "\"final_loss\": %.4f}\n",
        static_cast<long long>(e.model.n_layer), static_cast<long long>(e.model.d_model),
        static_cast<long long>(e.model.n_head), static_cast<long long>(vocab), static_cast<long long>(batch),
        static_cast<long long>(e.data.seq_len), static_cast<long long>(trainer.model().parameter_count()),
        device.c_str(), precision.c_str(), threads, steps, tokens_per_s, step_ms_median, flops_per_token,
        tokens_per_s * flops_per_token / 1e9, peak / 1e9,
        hpctrain::train::model_flops_utilization(tokens_per_s, flops_per_token, peak, 1), loss);
  }
  std::filesystem::remove_all(run_dir);
}
