// What a run tells its reader: the training records and progress lines of
// the log window, the evaluations', the test split's, and the summary at the
// end, with the timing they rest on (training time leaves evaluations out)
// and the speeds of train/throughput.h. It owns the run's log (run_log.h) and
// the log window (log_window.h), whose losses a checkpoint holds; the trainer
// decides when to report, this decides what a report says.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "ckpt/checkpoint.h"
#include "comm/communicator.h"
#include "optim/grad_clip.h"
#include "train/evaluator.h"
#include "train/log_window.h"
#include "train/run_log.h"
#include "train/sequence_scores.h"

namespace hpctrain::train {

// What a run ended with: what the summary reports, and what the trainer returns.
struct TrainSummary {
  std::string weights_sha256;            // identical for identical (seed, world size, config)
  std::optional<EvalResult> final_eval;  // absent when the run stopped early: the whole validation split by default
  std::optional<EvalResult> test_eval;   // the whole test split, when the data set has one
  std::int64_t steps = 0;                // optimizer steps done, those before a resume included
  std::uint64_t bytes_sent = 0;          // by this rank's reducer since it was made (Reducer::bytes_sent)
  bool preempted = false;                // by checkpoint.signal: exit with config::kRequeueExitCode
};

class RunReport {
 public:
  using Clock = std::chrono::steady_clock;

  RunReport(const std::filesystem::path& run_dir, int rank, std::int64_t total_steps);

  [[nodiscard]] RunLog& log() { return log_; }
  void line(const std::string& text) { log_.line(text); }
  void detail(const std::string& text) { log_.detail(text); }

  // What the speeds rest on: tokens per step (all ranks), FLOPs per token,
  // this rank's matmul peak and the ranks.
  void set_speed_basis(double tokens_per_step, double flops_per_token, double peak_flops, int ranks);
  // Training starts (or resumes) after step `step`: the clocks start now,
  // and the bytes the reducer sends are counted from `bytes_sent` on.
  void start_training(std::int64_t step, std::uint64_t bytes_sent);
  // An agreed step's mean loss over the ranks, into the window.
  void add_loss(double mean_loss) { window_.add_loss(mean_loss); }

  // The window's record and progress line after step `step`, the reducer
  // having sent `bytes_sent` bytes since it was made; a new window starts.
  void train_record(std::int64_t step, double lr, const optim::GradClip& clip, std::uint64_t bytes_sent);
  // An evaluation after step `step`, started at `started` (its time, this
  // report's included, is left out of the training time): the sample's record
  // and line, and the whole split's when read; `average` is the same
  // evaluation of the weight average.
  void evaluation(std::int64_t step, const Evaluation& raw, const std::optional<Evaluation>& average, bool masked,
                  Clock::time_point started);
  void test(std::int64_t step, const std::optional<EvalResult>& test, Clock::time_point started);
  // The last step is trained: the training time stops here, before the final
  // evaluation and checkpoint.
  void training_done();

  // After the last step, collective: the ranks' wall time and peak memory,
  // the summary record, the final figures (beside the unigram baseline: the
  // training split's entropy in nats, when known) and what to do next
  // (`hpctrain generate` where the run can sample: a causal model with a
  // tokenizer).
  void summary(const TrainSummary& run, std::optional<double> unigram_entropy, bool can_sample,
               comm::Communicator& comm, const std::string& run_dir);

  // Drops metric records of steps after `step`, which run again (a resume).
  std::size_t resume_at(std::int64_t step) { return log_.resume_at(step); }
  // The log window's state, the reducer's count being `bytes_sent` now.
  void save(ckpt::Snapshot& snapshot, std::uint64_t bytes_sent) const { window_.save(snapshot, bytes_sent); }
  void load(const ckpt::CheckpointReader& checkpoint) { window_.load(checkpoint); }

 private:
  [[nodiscard]] double since(Clock::time_point start) const;
  void exclude(double seconds);

  RunLog log_;
  LogWindow window_;
  std::int64_t total_steps_;
  double tokens_per_step_ = 0;
  double flops_per_token_ = 0;
  double peak_flops_ = 0;
  int ranks_ = 1;
  std::int64_t start_step_ = 0;
  std::uint64_t bytes_at_start_ = 0;  // the reducer's count when training (re)started
  Clock::time_point wall_start_ = Clock::now();
  Clock::time_point train_start_ = Clock::now();
  double eval_seconds_ = 0;     // left out of the training time
  double trained_seconds_ = 0;  // the training time, once the last step is done
};

}  // namespace hpctrain::train
