#include "train/log_window.h"

namespace hpctrain::train {

void LogWindow::restart(std::int64_t step) {
  loss_ = 0;
  steps_ = 0;
  start_timing(step);
}

void LogWindow::start_timing(std::int64_t step) {
  started_after_ = step;
  start_ = Clock::now();
  excluded_ = 0;
}

void LogWindow::add_loss(double mean_loss) {
  loss_ += mean_loss;
  ++steps_;
}

double LogWindow::training_seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count() - excluded_;
}

void LogWindow::save(ckpt::Snapshot& snapshot) const {
  snapshot.ints.emplace_back("log_window_steps", steps_);
  snapshot.reals.emplace_back("log_window_loss", loss_);
}

void LogWindow::load(const ckpt::CheckpointReader& checkpoint) {
  steps_ = checkpoint.integer("log_window_steps", 0);
  loss_ = checkpoint.real("log_window_loss");
}

}  // namespace hpctrain::train
