#include "train/metrics.h"

#include "train/tensorboard.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hpctrain::train {

RunLog::RunLog(const std::filesystem::path& run_dir, int rank)
    : metrics_path_(run_dir / "metrics.jsonl"), rank_(rank), tty_(isatty(STDOUT_FILENO) != 0) {
  std::filesystem::create_directories(run_dir / "logs");
  log_.open(run_dir / "logs" / fmt::format("rank-{}.log", rank), std::ios::app);
  if (rank == 0) {
    metrics_.open(metrics_path_, std::ios::app);
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

std::size_t RunLog::resume_at(std::int64_t step) {
  if (rank_ != 0) return 0;
  metrics_.close();
  std::vector<std::string> kept;
  std::size_t dropped = 0;
  {
    std::ifstream in(metrics_path_);
    for (std::string text; std::getline(in, text);) {
      const auto record = nlohmann::json::parse(text, nullptr, false);
      if (!record.is_discarded() && record.contains("step") && record["step"].get<std::int64_t>() > step) {
        ++dropped;
      } else {
        kept.push_back(text);
      }
    }
  }
  if (dropped > 0) {
    const auto tmp = metrics_path_.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      for (const auto& text : kept) out << text << '\n';
    }
    std::filesystem::rename(tmp, metrics_path_);
  }
  metrics_.open(metrics_path_, std::ios::app);
  return dropped;
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
