// Where a run reports: rank 0's JSONL metrics (RUN_DIR/metrics.jsonl, one
// record per log step and per evaluation) and the same values as TensorBoard
// scalars (RUN_DIR/tensorboard/), and a log file per rank (RUN_DIR/logs/rank-N.log).
// Rank 0 also prints its lines to stdout. The files are opened for appending
// as regular files only, never through a link (a run directory may be shared:
// docs/security.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/no_follow.h"

namespace hpctrain::train {

class TensorBoardWriter;

// A field of a metric record: a measurement, written as a JSON number with
// round-trip precision, or a count (steps, tokens, sequences), written as a
// JSON integer.
struct Metric {
  Metric(double measured) : value(measured) {}  // NOLINT(google-explicit-constructor): {"loss", 3.2}
  static Metric count(std::int64_t n) {
    Metric m(static_cast<double>(n));
    m.whole = n;
    return m;
  }
  double value;
  std::optional<std::int64_t> whole;  // set for a count
};
using Fields = std::vector<std::pair<std::string, Metric>>;

class RunLog {
 public:
  RunLog(const std::filesystem::path& run_dir, int rank);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // Rank 0: one JSON object {"kind": kind, "step": step, fields...}. Values are
  // written with round-trip precision, so identical runs give identical lines.
  void record(const std::string& kind, std::int64_t step, const Fields& fields);
  // After a resume at `step`: drops rank 0's metric records of later steps
  // (they are about to be run again); returns how many it dropped.
  std::size_t resume_at(std::int64_t step);
  // Every rank: a line in its log file; rank 0 also prints it.
  void line(const std::string& text);
  // Every rank: a line in its log file only (logs/rank-N.log): what a reader
  // of the run's output does not need, but one looking into it may.
  void detail(const std::string& text);
  // A progress line: live on a terminal, a plain line otherwise (rank 0).
  void progress(const std::string& text);

 private:
  std::filesystem::path metrics_path_;
  int rank_;
  bool tty_;
  std::optional<support::OwnedFd> metrics_;
  std::optional<support::OwnedFd> log_;
  std::unique_ptr<TensorBoardWriter> tensorboard_;
};

}  // namespace hpctrain::train
