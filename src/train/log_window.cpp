#include "train/log_window.h"

namespace hpctrain::train {

void LogWindow::restart(std::int64_t step, std::uint64_t bytes_sent) {
  loss_ = 0;
  steps_ = 0;
  bytes_before_ = 0;
  start_timing(step, bytes_sent);
}

void LogWindow::start_timing(std::int64_t step, std::uint64_t bytes_sent) {
  started_after_ = step;
  bytes_at_start_ = bytes_sent;
  start_ = Clock::now();
  excluded_ = 0;
}

void LogWindow::add_loss(double mean_loss) {
  loss_ += mean_loss;
  ++steps_;
}

double LogWindow::sent_per_step(std::uint64_t bytes_sent) const {
  return static_cast<double>(sent(bytes_sent)) / static_cast<double>(steps_ > 0 ? steps_ : 1);
}

double LogWindow::training_seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count() - excluded_;
}

void LogWindow::save(ckpt::Snapshot& snapshot, std::uint64_t bytes_sent) const {
  snapshot.ints.emplace_back("log_window_steps", steps_);
  snapshot.reals.emplace_back("log_window_loss", loss_);
  snapshot.ints.emplace_back("log_window_bytes", static_cast<std::int64_t>(sent(bytes_sent)));
}

void LogWindow::load(const ckpt::CheckpointReader& checkpoint) {
  steps_ = checkpoint.integer("log_window_steps", 0);
  loss_ = checkpoint.real("log_window_loss");
  // Format 5 did not count bytes: its window starts from none.
  bytes_before_ = checkpoint.file().has_attribute("log_window_bytes")
                      ? static_cast<std::uint64_t>(checkpoint.integer("log_window_bytes", 0))
                      : 0;
}

}  // namespace hpctrain::train
