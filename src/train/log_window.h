// The window of steps between two metric records: the agreed mean losses of
// its steps (the logged loss is their mean), the bytes the reducer sent in it,
// and its timing. The losses and bytes are part of a checkpoint, so the
// records after a resume continue exactly; the time spent evaluating is left
// out of the window's tokens/s.
#pragma once

#include <chrono>
#include <cstdint>

#include "ckpt/checkpoint.h"

namespace hpctrain::train {

class LogWindow {
 public:
  using Clock = std::chrono::steady_clock;

  // A window starting after step `step`, now (after a record), the reducer
  // having sent `bytes_sent` bytes so far (Reducer::bytes_sent).
  void restart(std::int64_t step, std::uint64_t bytes_sent);
  // Times the window from now, after step `step`, keeping its losses and
  // bytes (a resume); the reducer's count is `bytes_sent` now.
  void start_timing(std::int64_t step, std::uint64_t bytes_sent);
  void add_loss(double mean_loss);
  // Time within the window that is not training (an evaluation).
  void exclude(double seconds) { excluded_ += seconds; }

  [[nodiscard]] double mean_loss() const { return steps_ > 0 ? loss_ / static_cast<double>(steps_) : 0; }
  // The bytes the reducer sent per step of the window, its count being `bytes_sent` now.
  [[nodiscard]] double sent_per_step(std::uint64_t bytes_sent) const;
  // Steps trained since the window started, up to and including `step`.
  [[nodiscard]] std::int64_t steps_since_start(std::int64_t step) const { return step - started_after_; }
  [[nodiscard]] double training_seconds() const;

  // Attributes log_window_steps, log_window_loss and log_window_bytes (the
  // reducer's count being `bytes_sent` now).
  void save(ckpt::Snapshot& snapshot, std::uint64_t bytes_sent) const;
  void load(const ckpt::CheckpointReader& checkpoint);

 private:
  // Bytes sent in the window, the reducer's count being `bytes_sent` now.
  [[nodiscard]] std::uint64_t sent(std::uint64_t bytes_sent) const {
    return bytes_before_ + (bytes_sent - bytes_at_start_);
  }

  double loss_ = 0;  // the sum of the agreed mean losses added
  std::int64_t steps_ = 0;
  std::uint64_t bytes_before_ = 0;    // sent in this window before its timing started (a resume)
  std::uint64_t bytes_at_start_ = 0;  // the reducer's count when its timing started
  std::int64_t started_after_ = 0;
  Clock::time_point start_ = Clock::now();
  double excluded_ = 0;
};

}  // namespace hpctrain::train
