#include "train/run_log.h"

#include "support/input_file.h"
#include "train/tensorboard.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace hpctrain::train {
namespace {

// A line to a log or the metrics: as before these files were guarded, a
// failed write (a full disk) does not stop training; the checkpoint's own
// write reports it.
void append_line(const std::optional<support::OwnedFd>& file, const std::string& text) {
  if (!file) return;
  const std::string line = text + '\n';
  try {
    support::write_all(file->get(), line.data(), line.size(), "log");
  } catch (const std::exception&) {
  }
}

}  // namespace

RunLog::RunLog(const std::filesystem::path& run_dir, int rank)
    : metrics_path_(run_dir / "metrics.jsonl"), rank_(rank), tty_(isatty(STDOUT_FILENO) != 0) {
  std::filesystem::create_directories(run_dir);
  support::make_real_directory(run_dir / "logs", "log directory");
  log_.emplace(support::open_for_append(run_dir / "logs" / fmt::format("rank-{}.log", rank), "log"));
  if (rank == 0) {
    metrics_.emplace(support::open_for_append(metrics_path_, "metrics file"));
    tensorboard_ = std::make_unique<TensorBoardWriter>(run_dir / "tensorboard");
  }
}

RunLog::~RunLog() = default;

void RunLog::record(const std::string& kind, std::int64_t step, const Fields& fields) {
  if (rank_ != 0) return;
  nlohmann::ordered_json j;
  j["kind"] = kind;
  j["step"] = step;
  for (const auto& [key, metric] : fields) {
    if (metric.whole) {
      j[key] = *metric.whole;
    } else {
      j[key] = metric.value;
    }
  }
  append_line(metrics_, j.dump());
  for (const auto& [key, metric] : fields) tensorboard_->scalar(fmt::format("{}/{}", kind, key), step, metric.value);
  tensorboard_->flush();
}

std::size_t RunLog::resume_at(std::int64_t step) {
  if (rank_ != 0) return 0;
  metrics_.reset();
  std::vector<std::string> kept;
  std::size_t dropped = 0;
  {
    const support::InputFile in(metrics_path_, "metrics file");
    std::istringstream lines(in.read_at(0, static_cast<std::size_t>(in.size())));
    for (std::string text; std::getline(lines, text);) {
      const auto record = nlohmann::json::parse(text, nullptr, false);
      const auto at = record.is_object() ? record.find("step") : record.end();
      if (at != record.end() && at->is_number_integer() && at->get<std::int64_t>() > step) {
        ++dropped;
      } else {
        kept.push_back(text);
      }
    }
  }
  if (dropped > 0) {
    // A new temporary beside it, never one that stood there (a link planted
    // as metrics.jsonl.tmp would have made this write truncate its target).
    auto [tmp, out] = support::create_new_file_like(metrics_path_.string() + fmt::format(".tmp-{}", getpid()),
                                                    "temporary metrics file");
    std::string text;
    for (const auto& line : kept) text += line + '\n';
    support::write_all(out.get(), text.data(), text.size(), tmp.string());
    out.close(tmp.string());
    std::filesystem::rename(tmp, metrics_path_);  // replaces the name itself, a link there included
  }
  metrics_.emplace(support::open_for_append(metrics_path_, "metrics file"));
  return dropped;
}

void RunLog::line(const std::string& text) {
  append_line(log_, text);
  if (rank_ == 0) {
    fmt::print("{}{}\n", tty_ ? "\r\033[K" : "", text);
    (void)std::fflush(stdout);
  }
}

void RunLog::detail(const std::string& text) { append_line(log_, text); }

void RunLog::progress(const std::string& text) {
  append_line(log_, text);
  if (rank_ != 0) return;
  if (tty_) {
    fmt::print("\r\033[K{}", text);
  } else {
    fmt::print("{}\n", text);
  }
  (void)std::fflush(stdout);
}

}  // namespace hpctrain::train
