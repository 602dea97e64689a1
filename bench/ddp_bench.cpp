// ddp_bench: what DDP's bucket path costs, measured against baselines taken in
// the same run (nccl-tests' definitions: busbw = bytes / time * 2(n-1)/n, the
// time being the slowest rank's). Alternatives are timed in turn, round after
// round, and compared by their medians, so drift in the machine hits all alike.
//
//   mpiexec -n 2 build/bench/ddp_bench [--iterations N] [--total-mb M] [--bucket-cap-mb C] [--part 1|2|all]
//   bench/ddp-shaped-link.sh [RATE]   (part 2 with MPI over a tbf-limited TCP link)
//
// 1. Bucket path against plain MPI. A model of `total-mb` of fp32
//    parameters is split into DDP buckets of each size; one iteration is DDP's
//    finish_backward() with overlap off (every bucket reduced by the calling
//    thread, as the buckets left after any backward are), against the same
//    bucket sizes allreduced back to back by MPI_Allreduce itself (the
//    external reference: not hpctrain's communicator). Both
//    buffers are zeroed before every pass, as DDP's zero_grad does, so both
//    start from the same data and cache state. Target: ratio >= 0.95 from 1 MiB.
// 2. Exposed communication per step, on the quickstart GPT (L4 d256 V8192,
//    micro-batch 8 x 256): forward + backward (+ DDP) with no communication
//    (no_sync), with buckets reduced after backward, and overlapped with it.
//    exposed = step time with communication - step time without.
//
// Collective: every rank runs the same rounds; rank 0 prints.
#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/environment.h"
#include "comm/allreduce_bandwidth.h"
#include "comm/world.h"
#include "handles/mpi.h"
#include "model/language_model.h"
#include "optim/optimizer.h"
#include "reduce/ddp_reducer.h"
#include "runtime/allocator.h"
#include "runtime/threads.h"

namespace {

using hpctrain::comm::Communicator;
using hpctrain::comm::DType;
using hpctrain::comm::ReduceOp;
using Clock = std::chrono::steady_clock;

// Seconds since `start` on the slowest rank (collective).
double slowest_since(Communicator& comm, Clock::time_point start) {
  const std::int64_t mine = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  std::vector<std::int64_t> all(static_cast<std::size_t>(comm.size()));
  comm.allgather(&mine, all.data(), 1, DType::kInt64);
  return static_cast<double>(*std::max_element(all.begin(), all.end())) / 1e9;
}

// Times each of `bodies` once per round, round after round, so that drift in
// the machine's speed hits every alternative alike; `prepare[i]` runs untimed
// before body i. Returns each body's median over `rounds` (after one warm-up
// round), on the slowest rank.
std::vector<double> interleaved_medians(Communicator& comm, int rounds,
                                        const std::vector<std::function<void()>>& prepare,
                                        const std::vector<std::function<void()>>& bodies) {
  std::vector<std::vector<double>> seconds(bodies.size());
  for (int round = 0; round <= rounds; ++round) {
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      prepare[i]();
      comm.barrier();
      const auto start = Clock::now();
      bodies[i]();
      const double s = slowest_since(comm, start);
      if (round > 0) seconds[i].push_back(s);
    }
  }
  std::vector<double> medians;
  for (auto& v : seconds) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
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

void bucket_path_against_mpi(Communicator& comm, int iterations, std::size_t total_bytes) {
  const double factor = hpctrain::comm::bus_bandwidth_factor(comm.size());
  if (comm.rank() == 0) {
    std::printf("\n# 1. DDP bucket path against plain MPI_Allreduce, %zu MiB of fp32 gradients, %d ranks\n",
                total_bytes >> 20, comm.size());
    std::printf(
        "# median time per pass over all buckets, slowest rank, MPI and DDP interleaved; busbw in GB/s;\n"
        "# ratio = DDP busbw / MPI busbw (target >= 0.95)\n");
    std::printf("# %9s %8s %12s %12s %10s %10s %7s\n", "bucket", "buckets", "mpi(ms)", "ddp(ms)", "mpi busbw",
                "ddp busbw", "ratio");
  }
  const auto total_floats = static_cast<std::int64_t>(total_bytes / sizeof(float));
  for (std::size_t bucket = std::size_t{1} << 20; bucket <= total_bytes / 2; bucket *= 2) {
    // Parameters of 1/4 bucket, so buckets fill exactly.
    ParameterBlock model(total_floats, static_cast<std::int64_t>(bucket / sizeof(float) / 4));
    hpctrain::config::ParallelConfig parallel;
    parallel.first_bucket_mb = parallel.bucket_cap_mb = static_cast<double>(bucket) / (1 << 20);
    parallel.overlap = false;
    hpctrain::optim::AdamW unused(model.parameters(), torch::optim::AdamWOptions(1e-3));  // for checkpoints only
    hpctrain::reduce::DdpReducer ddp(parallel, model, unused, comm, comm);
    std::vector<float> raw(total_bytes / sizeof(float), 1.0F);
    const std::size_t per_bucket = bucket / sizeof(float);
    const auto medians = interleaved_medians(
        comm, iterations, {[&] { std::fill(raw.begin(), raw.end(), 0.0F); }, [&] { ddp.begin_step(); }},
        {[&] {
           for (std::size_t offset = 0; offset < raw.size(); offset += per_bucket) {
             const auto n = static_cast<int>(std::min(per_bucket, raw.size() - offset));
             MPI_Allreduce(MPI_IN_PLACE, raw.data() + offset, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
           }
         },
         [&] { ddp.end_backward(); }});
    const double raw_s = medians[0];
    const double ddp_s = medians[1];
    const double bytes = static_cast<double>(total_bytes);
    if (comm.rank() == 0) {
      std::printf("  %6zu MiB %8zu %12.2f %12.2f %10.3f %10.3f %7.3f\n", bucket >> 20, ddp.bucket_count(), 1e3 * raw_s,
                  1e3 * ddp_s, bytes / raw_s * factor / 1e9, bytes / ddp_s * factor / 1e9, raw_s / ddp_s);
    }
  }
}

void exposed_communication(Communicator& comm, int iterations, double bucket_cap_mb) {
  hpctrain::config::ModelConfig config;  // the quickstart's GPT
  config.kind = hpctrain::config::ModelKind::kGpt;
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
  const std::vector<Mode> modes = {{"no communication (no_sync)", false, true},
                                   {"DDP, buckets after backward", true, false},
                                   {"DDP, overlapped with backward", true, true}};
  hpctrain::config::ParallelConfig parallel;
  parallel.bucket_cap_mb = bucket_cap_mb;
  std::vector<std::shared_ptr<hpctrain::model::LanguageModel>> models;
  std::vector<std::unique_ptr<hpctrain::optim::AdamW>> optimizers;
  std::vector<std::unique_ptr<hpctrain::reduce::DdpReducer>> reducers;
  std::vector<std::function<void()>> prepare;
  std::vector<std::function<void()>> steps;
  for (const Mode& mode : modes) {
    torch::manual_seed(2);
    auto model = hpctrain::model::make_model(config, kVocab);
    auto for_mode = parallel;
    for_mode.overlap = mode.overlap;
    optimizers.push_back(
        std::make_unique<hpctrain::optim::AdamW>(model->parameters(), torch::optim::AdamWOptions(1e-3)));
    auto ddp = std::make_unique<hpctrain::reduce::DdpReducer>(for_mode, *model, *optimizers.back(), comm, comm);
    ddp->micro_step(mode.communicate);
    prepare.emplace_back([ddp = ddp.get()] { ddp->begin_step(); });
    steps.emplace_back([&, model = model.get(), ddp = ddp.get(), communicate = mode.communicate] {
      model->loss(tokens, targets).backward();
      if (communicate) ddp->end_backward();
    });
    models.push_back(std::move(model));
    reducers.push_back(std::move(ddp));
  }
  const auto step_s = interleaved_medians(comm, iterations, prepare, steps);
  if (comm.rank() == 0) {
    std::printf(
        "\n# 2. Exposed communication per step: quickstart GPT, micro-batch %lld x %lld, forward + backward (+ DDP),\n"
        "# %zu buckets (1 MiB, then at most %g MiB), %d ranks; median step, modes interleaved\n",
        static_cast<long long>(kMicroBatch), static_cast<long long>(config.max_seq_len), reducers[0]->bucket_count(),
        bucket_cap_mb, comm.size());
    std::printf("# %-32s %12s %14s %10s\n", "mode", "step(ms)", "exposed(ms)", "of step");
    for (std::size_t m = 0; m < modes.size(); ++m) {
      const double exposed = step_s[m] - step_s[0];
      std::printf("  %-32s %12.1f %14.1f %9.1f%%\n", modes[m].name, 1e3 * step_s[m], 1e3 * exposed,
                  100 * exposed / step_s[m]);
    }
    std::printf("# step time, overlapped / after backward: %.3f\n", step_s[2] / step_s[1]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"DDP bucket path and exposed communication, against same-run baselines"};
  int iterations = 40;
  std::size_t total_mb = 32;
  double bucket_cap_mb = 25;
  std::string part = "all";
  app.add_option("--iterations", iterations, "timed iterations per measurement")->check(CLI::PositiveNumber);
  app.add_option("--total-mb", total_mb, "gradient bytes for part 1, in MiB")->check(CLI::Range(2, 4096));
  app.add_option("--bucket-cap-mb", bucket_cap_mb, "DDP bucket cap for part 2, in MiB")->check(CLI::PositiveNumber);
  app.add_option("--part", part, "which measurement: 1 (bucket path), 2 (exposed communication) or all")
      ->check(CLI::IsMember({"1", "2", "all"}));
  CLI11_PARSE(app, argc, argv);
  try {
    const auto env = hpctrain::cluster::Environment::current();
    // The trainer's heap policy, so a step here costs what it costs there.
    const std::string heap = hpctrain::runtime::keep_freed_memory(env);
    const hpctrain::handles::MpiRuntime mpi;
    hpctrain::comm::World world(mpi, env, hpctrain::comm::WorldOptions{});
    const auto plan = hpctrain::runtime::plan_threads(env, world.local_size());
    hpctrain::runtime::apply_threads(plan.threads);
    if (world.rank() == 0) {
      std::printf("# ddp_bench: %d ranks, %d compute threads per rank (%s), backend %s; heap: %s\n", world.size(),
                  plan.threads, plan.source.c_str(), world.comm().backend(), heap.c_str());
    }
    if (part != "2") bucket_path_against_mpi(world.comm(), iterations, total_mb << 20);
    if (part != "1") exposed_communication(world.comm(), iterations, bucket_cap_mb);
    world.comm().barrier();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ddp_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
