#include "cli/plan_command.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <torch/types.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "cli/agreed_failure.h"
#include "cli/world_options.h"
#include "cluster/environment.h"
#include "comm/allreduce_bandwidth.h"
#include "comm/consensus.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "handles/mpi.h"
#include "reduce/merge_wire.h"
#include "support/text.h"
#include "train/trainer.h"
#include "train/training_data.h"

namespace hpctrain::cli {
namespace {

// DDAP needs at least this many of DDP's tokens for the same loss: the
// quickstart's measurement in docs/reducers.md ("What a local step is
// worth": 1.53x for average, 1.63x ties, 1.80x diloco at another rate).
constexpr double kDdapTokenCost = 1.5;

struct StepTime {
  double seconds = 0;           // the slowest rank's median
  std::int64_t parameters = 0;  // of the model measured
  double bytes_sent = 0;        // per timed step, by this rank's reducer (the communicators' count)
};

// The slowest rank's time, gathered in nanoseconds (the communicators reduce no doubles).
double slowest(double seconds, comm::World& world) {
  const auto mine = static_cast<std::int64_t>(seconds * 1e9);
  std::vector<std::int64_t> all_ranks(static_cast<std::size_t>(world.size()));
  world.comm().allgather(&mine, all_ranks.data(), 1, comm::DType::kInt64);
  return static_cast<double>(*std::max_element(all_ranks.begin(), all_ranks.end())) / 1e9;
}

// The slowest rank's median step time under `settings`, on random tokens.
StepTime median_step(const config::Experiment& base, const std::vector<std::string>& settings, comm::World& world,
                     const cluster::Environment& env, const PlanOptions& options) {
  std::vector<std::string> all = settings;
  all.push_back(fmt::format("training.steps={}", options.warmup + options.steps));
  const config::Experiment e = config::load_experiment_text(base.resolved_toml, base.path, all);
  double median = 0;
  std::int64_t parameters = 0;
  double bytes_sent = 0;
  {
    train::Trainer trainer(
        e, world, env,
        {std::make_unique<train::RandomTokens>(e.data.vocab_size, e.data.seq_len, e.job.seed), e.data.vocab_size});
    std::vector<double> seconds;
    std::uint64_t before_timed = 0;
    for (int i = 0; i < options.warmup + options.steps; ++i) {
      if (i == options.warmup) before_timed = trainer.bytes_sent();
      const auto start = std::chrono::steady_clock::now();
      (void)trainer.train_step();
      if (i >= options.warmup)
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    median = seconds[seconds.size() / 2];
    parameters = trainer.model().parameter_count();
    bytes_sent = static_cast<double>(trainer.bytes_sent() - before_timed) / static_cast<double>(options.steps);
  }
  return {slowest(median, world), parameters, bytes_sent};
}

struct MergeCost {
  double seconds = 0;       // the slowest rank's median
  std::uint64_t bytes = 0;  // one rank sent, by the communicator's count
};

// One merge of `parameters` values as DDAP makes it, through the experiment's
// wire (parallel.merge_wire and merge) over a communicator of its own over MPI:
// the outer gradient encoded, then merged. The median of five after one untimed.
MergeCost measure_merge(const config::ParallelConfig& parallel, std::int64_t parameters, comm::World& world) {
  comm::MpiCommunicator comm(world.mpi_comm(), world.collective_timeout(), world.wait_strategy());
  const auto wire = reduce::make_merge_wire(parallel, reduce::MergeRule::of(parallel), comm.size());
  // Values of an update's size, different on every rank (the figures do not depend on them).
  const at::Tensor delta = torch::randn({parameters}) * 1e-3 * (world.rank() + 1);
  std::vector<double> seconds;
  MergeCost cost;
  for (int i = 0; i < 6; ++i) {
    comm.barrier();
    const std::uint64_t before = comm.bytes_sent();
    const auto start = std::chrono::steady_clock::now();
    const reduce::MergeWire::Outgoing out = wire->encode(delta);
    (void)wire->merge(out.payload, parameters, comm);
    if (i > 0) seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    cost.bytes = comm.bytes_sent() - before;
  }
  std::sort(seconds.begin(), seconds.end());
  cost.seconds = slowest(seconds[seconds.size() / 2], world);
  return cost;
}

// A fresh private directory under TMPDIR (mkdtemp: no name another user
// could have planted), removed when it goes out of scope, error or not.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::error_code ec;
    const std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
    if (ec) {
      const char* given = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): read before any thread
      throw std::runtime_error(fmt::format("no directory for plan's scratch files: TMPDIR={} is not one ({})",
                                           support::printable(given == nullptr ? "" : given), ec.message()));
    }
    std::string pattern = (tmp / "hpctrain-plan-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error(fmt::format("cannot create a scratch directory like {} (TMPDIR): {}",
                                           support::printable(pattern), std::system_category().message(errno)));
    }
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

void run_plan(const std::string& experiment_file, const std::vector<std::string>& overrides,
              const PlanOptions& options) {
  const auto env = cluster::Environment::current();
  handles::MpiRuntime mpi;
  finalize_after_agreed_failure(mpi, [&] {
    // Each rank's own scratch run directory: the measurements write nothing the user keeps.
    const ScratchDirectory scratch;
    std::vector<std::string> settings = overrides;
    for (const char* s : {"checkpoint.resume=never", "checkpoint.interval=0", "checkpoint.keep_best=false",
                          "eval.interval=0", "eval.sample_tokens=0", "logging.interval=1000000000"}) {
      settings.emplace_back(s);
    }
    settings.push_back("job.run_dir=" + scratch.path().string());
    const config::Experiment e = config::load_experiment(experiment_file, settings);
    comm::World world(mpi, env, world_options(e.parallel));
    const bool root = world.rank() == 0;
    const auto say = [&](const std::string& text) {
      if (root) fmt::print("{}\n", text);
    };
    say(fmt::format("plan: measuring {} on {} rank{} ({} timed steps after {} untimed, random tokens)", e.path,
                    world.size(), world.size() == 1 ? "" : "s", options.steps, options.warmup));

    // A DDAP local step (no merge within the measurement) is the step with no
    // communication at all; DDP's step is the experiment's own.
    std::vector<std::string> local = settings;
    for (const char* s : {"parallel.reducer=ddap", "parallel.zero=0", "parallel.merge_mode=blocking",
                          "parallel.merge_every=1000000000", "parallel.sync_steps=0", "parallel.sync_wire=fp32",
                          "parallel.merge_fragments=1", "parallel.gradient_wire=fp32"}) {
      local.emplace_back(s);
    }
    // DDAP wants a sample on every rank; DDP's extra ranks would stand in with
    // one (train/batch_geometry.h), which is what a rank then computes.
    if (e.training.batch_size < world.size()) local.push_back(fmt::format("training.batch_size={}", world.size()));
    std::vector<std::string> ddp = settings;
    for (const char* s : {"parallel.reducer=ddp", "parallel.sync_steps=0", "parallel.sync_wire=fp32",
                          "parallel.merge_wire=fp32", "parallel.merge_fragments=1"}) {
      ddp.emplace_back(s);
    }
    const StepTime local_step = median_step(e, local, world, env, options);
    const double compute = local_step.seconds;
    const StepTime ddp_measured = median_step(e, ddp, world, env, options);
    const double ddp_step = ddp_measured.seconds;

    // One allreduce of the model, as a merge sends it (fp32, over MPI).
    const std::int64_t parameters = local_step.parameters;
    const auto bytes = static_cast<std::size_t>(parameters) * 4;
    auto buffer = comm::host_bandwidth_buffer(bytes);
    const comm::BandwidthRow allreduce = comm::measure_allreduce(world.comm(), *buffer, bytes, bytes).front();
    const MergeCost merge = measure_merge(e.parallel, parameters, world);
    if (!root) return;

    const double exposed = std::max(0.0, ddp_step - compute);
    // What a rank sends by the communicators' count (comm/communicator.h):
    // DDP's as its reducer counted it in the timed steps (an allreduce of the
    // gradients; under ZeRO-1 a reduce-scatter and the weights' allgather).
    const double ring = 2.0 * static_cast<double>(world.size() - 1) / static_cast<double>(world.size());
    const double ddp_bytes = ddp_measured.bytes_sent;
    fmt::print(
        "plan: model {:.2f}M parameters: {:.1f} MB of fp32 weights, the size of DDP's gradients every step{}\n"
        "  step without communication (a DDAP local step)   {:8.1f} ms\n"
        "  DDP step, as the experiment sets it               {:8.1f} ms: communication adds {:.1f} ms, {:.1f}% of the "
        "step; {:.2f} MB sent by each rank\n"
        "  one allreduce of the model (MPI)                  {:8.1f} ms (busbw {:.2f} GB/s)\n"
        "  one merge of the model, {} wire (MPI)           {:8.1f} ms, {:.2f} MB sent by each rank\n",
        static_cast<double>(parameters) / 1e6, static_cast<double>(bytes) / 1e6,
        e.parallel.bf16_compression ? " (half that as bf16: parallel.bf16_compression)" : "", 1e3 * compute,
        1e3 * ddp_step, 1e3 * exposed, ddp_step > 0 ? 100 * exposed / ddp_step : 0.0, ddp_bytes / 1e6,
        1e3 * allreduce.seconds, allreduce.busbw, config::name_of(e.parallel.merge_wire), 1e3 * merge.seconds,
        static_cast<double>(merge.bytes) / 1e6);
    // A blocking merge costs the merge measured (three allreduces for ties),
    // and with merge_moments two more allreduces of the model's size; every H steps.
    const int moments = e.parallel.merge_moments ? 2 : 0;
    const double merge_seconds = merge.seconds + moments * allreduce.seconds;
    const double merge_bytes = static_cast<double>(merge.bytes) + moments * ring * static_cast<double>(bytes);
    fmt::print("  DDAP ({} merge{}, blocking), per step:\n", config::name_of(e.parallel.merge),
               e.parallel.merge_moments ? " with the moments" : "");
    double best = 0;
    std::vector<std::int64_t> intervals = {4, 16, 64};
    if (std::find(intervals.begin(), intervals.end(), e.parallel.merge_every) == intervals.end()) {
      intervals.push_back(e.parallel.merge_every);
    }
    std::sort(intervals.begin(), intervals.end());
    for (const std::int64_t h : intervals) {
      const double step = compute + merge_seconds / static_cast<double>(h);
      const double speed = ddp_step / step;
      best = std::max(best, speed);
      const double sent = merge_bytes / static_cast<double>(h);
      fmt::print("    H = {:<4} {:8.1f} ms: {:.2f}x DDP's tokens/s, {:.3f} MB sent per step ({:.0f}x fewer){}\n", h,
                 1e3 * step, speed, sent / 1e6, sent > 0 ? ddp_bytes / sent : 0.0,
                 h == e.parallel.merge_every ? " (parallel.merge_every)" : "");
    }
    const double ceiling = ddp_step / std::max(compute, 1e-9);
    fmt::print(
        "plan: DDAP needs about {:.1f}x DDP's tokens for the same loss (docs/reducers.md, \"What a local step is "
        "worth\"), so it reaches a loss sooner only where it runs more than {:.1f}x DDP's tokens/s. Here it runs at "
        "most {:.2f}x (no communication at all: {:.2f}x). {}\n",
        kDdapTokenCost, kDdapTokenCost, best, ceiling,
        best > kDdapTokenCost
            ? fmt::format("DDAP should win, by up to about {:.1f}x: compare both on your data (docs/reducers.md, "
                          "\"Choosing by measurement\").",
                          best / kDdapTokenCost)
            : "Use DDP: its communication costs less than DDAP's extra tokens.");
  });
}

}  // namespace hpctrain::cli
