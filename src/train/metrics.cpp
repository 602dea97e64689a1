#include "train/metrics.h"

#include "train/tensorboard.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>

namespace hpctrain::train {

RunLog::RunLog(const std::filesystem::path& run_dir, int rank) : rank_(rank), tty_(isatty(STDOUT_FILENO) != 0) {
  std::filesystem::create_directories(run_dir / "logs");
  log_.open(run_dir / "logs" / fmt::format("rank-{}.log", rank), std::ios::app);
  if (rank == 0) {
    metrics_.open(run_dir / "metrics.jsonl", std::ios::app);
    tensorboard_ = std::make_unique<TensorBoardWriter>(run_dir / "tensorboard");
  }
}

RunLog::~RunLog() = default;

void RunLog::record(const std::string& kind, std::int64_t step, const Fields& fields) {
  if (rank_ != 0) return;
  nlohmann::ordered_json j;
  j["kind"] = kind;
  j["step"] = step;
  for (const auto& [key, value] : fields) j[key] = value;
  metrics_ << j.dump() << '\n';
  metrics_.flush();
  for (const auto& [key, value] : fields) tensorboard_->scalar(fmt::format("{}/{}", kind, key), step, value);
  tensorboard_->flush();
}

void RunLog::line(const std::string& text) {
  log_ << text << '\n';
  log_.flush();
  if (rank_ == 0) {
    fmt::print("{}{}\n", tty_ ? "\r\033[K" : "", text);
    (void)std::fflush(stdout);
  }
}

void RunLog::progress(const std::string& text) {
  log_ << text << '\n';
  log_.flush();
  if (rank_ != 0) return;
  if (tty_) {
    fmt::print("\r\033[K{}", text);
  } else {
    fmt::print("{}\n", text);
  }
  (void)std::fflush(stdout);
}

}  // namespace hpctrain::train
