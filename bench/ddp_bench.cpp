// ddp_bench: what DDP's bucket path costs, measured against baselines taken in
// the same run (nccl-tests' definitions: busbw = bytes / time * 2(n-1)/n, the
// time being the slowest rank's mean).
//
//   mpiexec -n 2 build/bench/ddp_bench [--iterations N] [--total-mb M]
//
// 1. Bucket path against the raw communicator. A model of `total-mb` of fp32
//    parameters is split into DDP buckets of each size; one iteration is DDP's
//    finish_backward() with overlap off (every bucket through the communication
//    thread, averaging folded in), against the same bucket sizes allreduced back
//    to back on the bare communicator. Target: ratio >= 0.95 from 1 MiB.
// 2. Exposed communication per step, on the quickstart GPT (L4 d256 V8192,
//    micro-batch 8 x 256): forward + backward (+ DDP) with no communication
//    (no_sync), with buckets reduced after backward, and overlapped with it.
//    exposed = step time with communication - step time without.
//
// Collective: every rank runs the same iterations; the figures are rank 0's.
#include <torch/torch.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#include "cluster/environment.h"
#include "comm/allreduce_bandwidth.h"
#include "comm/world.h"
#include "handles/mpi.h"
#include "model/language_model.h"
#include "reduce/ddp_reducer.h"
#include "runtime/threads.h"

namespace {

using hpctrain::comm::Communicator;
using hpctrain::comm::DType;
using hpctrain::comm::ReduceOp;
using Clock = std::chrono::steady_clock;

// The slowest rank's mean seconds per call of `body`, after one warm-up call.
double timed(Communicator& comm, int iterations, const std::function<void()>& body) {
  body();
  comm.barrier();
  const auto start = Clock::now();
  for (int i = 0; i < iterations; ++i) body();
  const std::int64_t mine = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  std::vector<std::int64_t> all(static_cast<std::size_t>(comm.size()));
  comm.allgather(&mine, all.data(), 1, DType::kInt64);
  return static_cast<double>(*std::max_element(all.begin(), all.end())) / 1e9 / iterations;
}

// Parameters and nothing else: DDP only needs parameters() and their gradients.
class ParameterBlock : public hpctrain::model::LanguageModel {
 public:
  ParameterBlock(std::int64_t total_floats, std::int64_t per_parameter) {
    for (std::int64_t i = 0; total_floats > 0; ++i, total_floats -= per_parameter) {
      register_parameter("p" + std::to_string(i), torch::ones({std::min(per_parameter, total_floats)}));
    }
  }
  at::Tensor forward(const at::Tensor& tokens) override { return tokens; }
  [[nodiscard]] hpctrain::model::Objective objective() const override { return hpctrain::model::Objective::kCausal; }
  [[nodiscard]] double flops_per_token(std::int64_t /*seq_len*/) const override { return 0; }
};

void bucket_path_against_raw(Communicator& comm, int iterations, std::size_t total_bytes) {
  const double factor = hpctrain::comm::bus_bandwidth_factor(comm.size());
  if (comm.rank() == 0) {
    std::printf("\n# 1. DDP bucket path against the raw allreduce, %zu MiB of fp32 gradients, %d ranks\n",
                total_bytes >> 20, comm.size());
    std::printf("# time per step, slowest rank; busbw in GB/s; ratio = bucket path / raw (target >= 0.95)\n");
    std::printf("# %9s %8s %12s %12s %10s %10s %7s\n", "bucket", "buckets", "raw(ms)", "ddp(ms)", "raw busbw",
                "ddp busbw", "ratio");
  }
  const auto total_floats = static_cast<std::int64_t>(total_bytes / sizeof(float));
  for (std::size_t bucket = std::size_t{1} << 20; bucket <= total_bytes / 2; bucket *= 2) {
    // Parameters of 1/4 bucket, so buckets fill exactly.
    ParameterBlock model(total_floats, static_cast<std::int64_t>(bucket / sizeof(float) / 4));
    hpctrain::reduce::DdpReducer ddp(model, comm, {bucket, bucket, /*overlap=*/false, false});
    const double ddp_s = timed(comm, iterations, [&] {
      ddp.zero_grad();
      ddp.finish_backward();
    });
    std::vector<float> raw(total_bytes / sizeof(float), 1.0F);
    const std::size_t per_bucket = bucket / sizeof(float);
    const double raw_s = timed(comm, iterations, [&] {
      for (std::size_t offset = 0; offset < raw.size(); offset += per_bucket) {
        comm.allreduce(raw.data() + offset, std::min(per_bucket, raw.size() - offset), DType::kFloat32, ReduceOp::kSum);
      }
    });
    const double bytes = static_cast<double>(total_bytes);
    if (comm.rank() == 0) {
      std::printf("  %6zu MiB %8zu %12.2f %12.2f %10.3f %10.3f %7.3f\n", bucket >> 20, ddp.bucket_count(), 1e3 * raw_s,
                  1e3 * ddp_s, bytes / raw_s * factor / 1e9, bytes / ddp_s * factor / 1e9, raw_s / ddp_s);
    }
  }
}

void exposed_communication(Communicator& comm, int iterations) {
  hpctrain::config::ModelConfig config;  // the quickstart's GPT
  config.kind = "gpt";
  config.n_layer = 4;
  config.n_head = 4;
  config.d_model = 256;
  config.max_seq_len = 256;
  constexpr std::int64_t kVocab = 8192;
  constexpr std::int64_t kMicroBatch = 8;
  torch::manual_seed(1);
  const auto tokens = torch::randint(kVocab, {kMicroBatch, config.max_seq_len});
  const auto targets = torch::randint(kVocab, {kMicroBatch, config.max_seq_len});

  struct Mode {
    const char* name;
    bool communicate;
    bool overlap;
  };
  const Mode modes[] = {{"no communication (no_sync)", false, true},
                        {"DDP, buckets after backward", true, false},
                        {"DDP, overlapped with backward", true, true}};
  double step_s[3] = {};
  std::size_t buckets = 0;
  for (int m = 0; m < 3; ++m) {
    torch::manual_seed(2);
    auto model = hpctrain::model::make_model(config, kVocab);
    hpctrain::reduce::DdpReducer ddp(*model, comm, {std::size_t{1} << 20, std::size_t{25} << 20, modes[m].overlap});
    buckets = ddp.bucket_count();
    ddp.set_sync(modes[m].communicate);
    step_s[m] = timed(comm, iterations, [&] {
      ddp.zero_grad();
      hpctrain::model::language_model_loss(model->forward(tokens), targets).backward();
      if (modes[m].communicate) ddp.finish_backward();
    });
  }
  if (comm.rank() == 0) {
    std::printf(
        "\n# 2. Exposed communication per step: quickstart GPT, micro-batch %lld x %lld, %zu buckets "
        "(1 MiB, then 25 MiB), %d ranks\n",
        static_cast<long long>(kMicroBatch), static_cast<long long>(config.max_seq_len), buckets, comm.size());
    std::printf("# %-32s %12s %14s %10s\n", "mode", "step(ms)", "exposed(ms)", "of step");
    for (int m = 0; m < 3; ++m) {
      const double exposed = step_s[m] - step_s[0];
      std::printf("  %-32s %12.1f %14.1f %9.1f%%\n", modes[m].name, 1e3 * step_s[m], 1e3 * exposed,
                  100 * exposed / step_s[m]);
    }
    std::printf("# overlapped / after backward: %.3f of the step time\n", step_s[2] / step_s[1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"DDP bucket path and exposed communication, against same-run baselines"};
  int iterations = 10;
  std::size_t total_mb = 32;
  app.add_option("--iterations", iterations, "timed iterations per measurement")->check(CLI::PositiveNumber);
  app.add_option("--total-mb", total_mb, "gradient bytes for part 1, in MiB")->check(CLI::Range(2, 4096));
  CLI11_PARSE(app, argc, argv);
  try {
    const auto env = hpctrain::cluster::Environment::current();
    const hpctrain::handles::MpiRuntime mpi;
    hpctrain::comm::World world(mpi, env, hpctrain::comm::WorldOptions{});
    const auto plan = hpctrain::runtime::plan_threads(env, world.local_size());
    hpctrain::runtime::apply_threads(plan.threads);
    if (world.rank() == 0) {
      std::printf("# ddp_bench: %d ranks, %d compute threads per rank (%s), backend %s\n", world.size(), plan.threads,
                  plan.source.c_str(), world.comm().backend());
    }
    bucket_path_against_raw(world.comm(), iterations, total_mb << 20);
    exposed_communication(world.comm(), iterations);
    world.comm().barrier();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
