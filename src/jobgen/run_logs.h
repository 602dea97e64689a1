// `jobgen logs`: a run's batch output, every job of it in order (a requeued
// job keeps its file, a resubmission writes a new one), and with `follow`
// the output as it grows, across requeues and resubmissions, until the run
// record says the run has ended for good. Each job's file is the one its
// start record names (templates/sbatch.mustache writes it).
#pragma once

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

namespace hpctrain::jobgen {

struct LogsRequest {
  std::filesystem::path run_dir;
  std::optional<long> index;  // a sweep's array index; required for a sweep
  bool follow = false;
  std::chrono::milliseconds poll{1000};
  // While following: how often the queue is asked whether a job of the run
  // is still there (a run killed without its end record must not be followed forever).
  std::chrono::seconds queue_check{15};
};

// Writes to `out`; returns the exit status: 0, or 1 when following stopped
// because no job of the run was left in the queue yet the record never ended.
int print_logs(const LogsRequest& request, std::FILE* out);

}  // namespace hpctrain::jobgen
