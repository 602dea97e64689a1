#include "train/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/memory_usage.h"
#include "support/text.h"
#include "train/throughput.h"

namespace hpctrain::train {

RunReport::RunReport(const std::filesystem::path& run_dir, int rank, std::int64_t total_steps)
    : log_(run_dir, rank), total_steps_(total_steps) {}

void RunReport::set_speed_basis(double tokens_per_step, double flops_per_token, double peak_flops, int ranks) {
  tokens_per_step_ = tokens_per_step;
  flops_per_token_ = flops_per_token;
  peak_flops_ = peak_flops;
  ranks_ = ranks;
}

void RunReport::start_training(std::int64_t step, std::uint64_t bytes_sent) {
  start_step_ = step;
  bytes_at_start_ = bytes_sent;
  window_.start_timing(step, bytes_sent);
  train_start_ = Clock::now();
}

double RunReport::since(Clock::time_point start) const {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void RunReport::exclude(double seconds) {
  eval_seconds_ += seconds;
  window_.exclude(seconds);
}

void RunReport::train_record(std::int64_t step, double lr, const optim::GradClip& clip, std::uint64_t bytes_sent) {
  const double sent_per_step = window_.sent_per_step(bytes_sent);
  const double tokens_per_s = tokens_per_second(static_cast<double>(window_.steps_since_start(step)) * tokens_per_step_,
                                                window_.training_seconds());
  const double mfu = model_flops_utilization(tokens_per_s, flops_per_token_, peak_flops_, ranks_);
  const double eta =
      since(train_start_) / static_cast<double>(step - start_step_) * static_cast<double>(total_steps_ - step);
  log_.record("train", step,
              {{"loss", window_.mean_loss()},
               {"lr", lr},
               {"grad_norm", clip.norm},
               {"tokens_per_s", tokens_per_s},
               {"mfu", mfu},
               {"sent_bytes_per_step", sent_per_step},        // this rank, by the reducer (a DDAP merge step's share)
               {"steps_total", Metric::count(total_steps_)},  // for `jobgen status`: step N of total
               {"eta_s", eta}});
  log_.progress(
      fmt::format("step {:>6}/{} | loss {:.4f} | lr {:.3e} | {:.0f} tok/s | MFU {:.1f}% | {:.3g} MB sent/step | ETA {}",
                  step, total_steps_, window_.mean_loss(), lr, tokens_per_s, 100 * mfu, sent_per_step / 1e6,
                  support::format_duration(eta)));
  window_.restart(step, bytes_sent);
}

void RunReport::evaluation(std::int64_t step, const Evaluation& raw, const std::optional<Evaluation>& average,
                           bool masked, Clock::time_point started) {
  const double train_s = since(train_start_) - eval_seconds_;
  // One record and line for the sample (every evaluation: the curve), one
  // more for the whole split when this evaluation read it.
  auto report = [&](const std::string& kind, const EvalResult& r, const EvalResult* ema) {
    Fields fields = {{"eval_loss", r.loss},
                     {"eval_perplexity", r.perplexity},
                     {"eval_tokens", Metric::count(r.tokens)},
                     {"eval_sequences", Metric::count(r.sequences)},
                     {"eval_full", Metric::count(r.full() ? 1 : 0)},
                     {"train_s", train_s}};
    std::string extra;
    if (masked) {
      fields.emplace_back("masked_accuracy", r.masked_accuracy);
      extra = fmt::format(", masked-token accuracy {:.2f}%", 100 * r.masked_accuracy);
    }
    if (ema != nullptr) {
      fields.emplace_back("ema_eval_loss", ema->loss);
      fields.emplace_back("ema_eval_perplexity", ema->perplexity);
      extra += fmt::format(" | EMA weights: eval loss {:.4f}, perplexity {:.2f}", ema->loss, ema->perplexity);
    }
    log_.record(kind, step, fields);
    log_.line(fmt::format("step {:>6} | eval loss {:.4f} | perplexity {:.2f}{} | {}", step, r.loss, r.perplexity, extra,
                          r.coverage()));
  };
  report("eval", raw.sample, average ? &average->sample : nullptr);
  if (raw.full) report("eval_full", *raw.full, average && average->full ? &*average->full : nullptr);
  exclude(since(started));
}

void RunReport::test(std::int64_t step, const std::optional<EvalResult>& test, Clock::time_point started) {
  if (test) {
    log_.record("test", step,
                {{"test_loss", test->loss},
                 {"test_perplexity", test->perplexity},
                 {"test_tokens", Metric::count(test->tokens)},
                 {"test_sequences", Metric::count(test->sequences)}});
  }
  exclude(since(started));
}

void RunReport::training_done() { trained_seconds_ = since(train_start_) - eval_seconds_; }

void RunReport::summary(const TrainSummary& run, std::optional<double> unigram_entropy, bool can_sample,
                        comm::Communicator& comm, const std::string& run_dir) {
  const double speed =
      tokens_per_second(static_cast<double>(run.steps - start_step_) * tokens_per_step_, trained_seconds_);
  const int ranks = comm.size();

  // Timing over ranks.
  const auto mine = static_cast<std::int64_t>(since(wall_start_) * 1e6);
  std::vector<std::int64_t> walls(static_cast<std::size_t>(ranks));
  comm.allgather(&mine, walls.data(), 1, comm::DType::kInt64);
  const auto [min_it, max_it] = std::minmax_element(walls.begin(), walls.end());
  double sum = 0;
  for (auto w : walls) sum += static_cast<double>(w);
  log_.line(fmt::format(
      "wall time per rank: max {:.2f} s, min {:.2f} s, avg {:.2f} s; training {:.2f} s (evaluations excluded), "
      "{:.0f} tokens/s over {} rank{}",
      static_cast<double>(*max_it) / 1e6, static_cast<double>(*min_it) / 1e6, sum / static_cast<double>(ranks) / 1e6,
      trained_seconds_, speed, ranks, ranks == 1 ? "" : "s"));
  // Every rank's reducer sends the same nominal volume (the same collectives).
  // Logged only: after a resume it covers this process's steps.
  const double sent_per_step = static_cast<double>(run.bytes_sent - bytes_at_start_) /
                               static_cast<double>(std::max<std::int64_t>(run.steps - start_step_, 1));
  log_.line(fmt::format("sent by each rank's reducer: {:.4g} MB per step over {} steps", sent_per_step / 1e6,
                        run.steps - start_step_));
  Fields fields = {
      {"tokens_per_s", speed}, {"train_s", trained_seconds_}, {"wall_max_s", static_cast<double>(*max_it) / 1e6}};
  // Peak resident memory over ranks: what a per-node memory limit sees. Only
  // logged: metrics.jsonl stays the same for the same seed and world size.
  const std::int64_t my_peak = runtime::peak_resident_bytes();
  std::vector<std::int64_t> peaks(static_cast<std::size_t>(ranks));
  comm.allgather(&my_peak, peaks.data(), 1, comm::DType::kInt64);
  if (const auto [least, most] = std::minmax_element(peaks.begin(), peaks.end()); *least >= 0) {
    constexpr double kMiB = 1 << 20;
    log_.line(fmt::format("peak resident memory per rank (VmHWM): max {:.0f} MiB (rank {}), min {:.0f} MiB (rank {})",
                          static_cast<double>(*most) / kMiB, most - peaks.begin(), static_cast<double>(*least) / kMiB,
                          least - peaks.begin()));
  }
  if (run.final_eval) {
    const EvalResult& v = *run.final_eval;
    fields.insert(fields.begin(), {{"eval_loss", v.loss},
                                   {"eval_tokens", Metric::count(v.tokens)},
                                   {"eval_full", Metric::count(v.full() ? 1 : 0)}});
    std::string baseline;
    if (unigram_entropy) {
      // The bar any language model must clear: predicting each token by its
      // frequency alone, ignoring context.
      const double unigram = *unigram_entropy;
      baseline = fmt::format("; predicting tokens by their frequency alone scores {:.4f} nats (perplexity {:.2f})",
                             unigram, std::exp(unigram));
    }
    log_.line(fmt::format("validation loss {:.4f} nats (perplexity {:.2f}) over {}{}", v.loss, v.perplexity,
                          v.coverage(), baseline));
  }
  const auto& test = run.test_eval;
  if (test) {
    fields.emplace_back("test_loss", test->loss);
    fields.emplace_back("test_tokens", Metric::count(test->tokens));
  }
  log_.record("summary", run.steps, fields);
  log_.line(fmt::format("final weights sha256: {}", run.weights_sha256));
  // Last but for what to do next: the number no tuning has seen.
  if (test) {
    log_.line(
        fmt::format("test loss {:.4f} nats (perplexity {:.2f}) over {} (other files than the validation "
                    "split's: compare runs on one split, never a validation figure with a test one)",
                    test->loss, test->perplexity, test->coverage()));
  }
  const std::string generate =
      can_sample ? fmt::format("`hpctrain generate {}` samples again (--prompt, --temperature, --seed), ", run_dir)
                 : "";
  log_.line(
      fmt::format("next: {}`hpctrain eval {}` evaluates the checkpoint, `jobgen status {}` sums the run up; "
                  "docs/training.md explains this output",
                  generate, run_dir, run_dir));
}

}  // namespace hpctrain::train
