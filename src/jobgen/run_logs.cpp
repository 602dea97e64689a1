#include "jobgen/run_logs.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "jobgen/run_record.h"
#include "jobgen/slurm_states.h"
#include "support/bounded_file.h"
#include "support/input_file.h"
#include "support/text.h"

namespace hpctrain::jobgen {
namespace {

using support::printable;
using Clock = std::chrono::steady_clock;

RunPoint select_point(const LogsRequest& request) {
  std::vector<RunPoint> run = read_run(request.run_dir);
  const std::string dir = printable(request.run_dir.string());
  const bool sweep = !run.front().index.empty();
  if (!sweep) {
    if (request.index) throw RunDirError(fmt::format("{} is not a sweep: --index does not apply", dir));
    return run.front();
  }
  if (!request.index) {
    throw RunDirError(fmt::format("{} is a sweep of {} array indices ({} to {}): choose one with --index", dir,
                                  run.size(), run.front().index, run.back().index));
  }
  for (auto& point : run) {
    if (point.index == std::to_string(*request.index)) return point;
  }
  throw RunDirError(fmt::format("{}: the sweep has no array index {}", dir, *request.index));
}

struct LogFile {
  std::string path;
  std::string job;
};

// Each job's file once, in the order the jobs started.
std::vector<LogFile> log_files(const RunPoint& point) {
  std::vector<LogFile> files;
  for (const auto& e : point.events) {
    if (!e.start || e.log.empty()) continue;
    if (std::none_of(files.begin(), files.end(), [&e](const LogFile& f) { return f.path == e.log; })) {
      files.push_back({e.log, slurm_id(e)});
    }
  }
  return files;
}

// Prints what each file gained since it was last read, with a header when
// the output moves to another file.
class LogPrinter {
 public:
  explicit LogPrinter(std::FILE* out) : out_(out) {}

  void drain(const LogFile& file) {
    std::optional<support::InputFile> in;
    try {
      // Not blocking on a FIFO, checked on the descriptor: the record names
      // the file, and anyone in the project may write the record.
      in = support::InputFile::open_if_present(file.path, "log");
    } catch (const support::InputError& e) {
      if (refused_.insert(file.path).second) fmt::print(stderr, "jobgen: warning: {}\n", printable(e.what()));
      return;
    }
    if (!in) return;  // not opened by SLURM yet
    const std::uint64_t size = in->size();
    auto& offset = offsets_[file.path];
    if (size < offset) offset = 0;  // truncated: a requeued job that opened its file afresh
    if (size == offset) return;
    if (current_ != file.path) {
      fmt::print(out_, "==> {} (job {}) <==\n", printable(file.path), file.job);
      current_ = file.path;
    }
    constexpr std::size_t kBlock = 65536;
    while (offset < size) {
      const std::string block =
          in->read_at(offset, static_cast<std::size_t>(std::min<std::uint64_t>(size - offset, kBlock)));
      if (block.empty()) break;
      (void)std::fwrite(block.data(), 1, block.size(), out_);
      offset += block.size();
    }
    (void)std::fflush(out_);
  }

 private:
  std::FILE* out_;
  std::map<std::string, std::uint64_t> offsets_;
  std::set<std::string> refused_;  // warned about once
  std::string current_;
};

}  // namespace

int print_logs(const LogsRequest& request, std::FILE* out) {
  LogPrinter printer(out);
  auto last_check = Clock::now();
  int empty_queue_checks = 0;
  std::set<std::string> warned;
  while (true) {
    const RunPoint point = select_point(request);
    // Unreadable record lines are named once each: a job they describe may run.
    for (const auto& line : point.skipped) {
      if (warned.insert(line).second) fmt::print(stderr, "jobgen: warning: {}\n", line);
    }
    const std::vector<LogFile> files = log_files(point);
    for (const auto& file : files) printer.drain(file);
    if (!request.follow) {
      if (files.empty()) {
        fmt::print(stderr, "jobgen: no job of {} has started yet\n", printable(request.run_dir.string()));
      }
      return 0;
    }
    if (ended_for_good(point)) return 0;  // the last file is drained above
    // A run whose jobs all left the queue without an end record (SIGKILL,
    // a node failure) would be followed forever: ask the queue now and then.
    const auto ids = job_ids(point);
    if (!ids.empty() && Clock::now() - last_check >= request.queue_check) {
      last_check = Clock::now();
      empty_queue_checks = live_jobs(ids).empty() ? empty_queue_checks + 1 : 0;
      if (empty_queue_checks == 2) {
        fmt::print(stderr,
                   "jobgen: no job of this run is queued or running, and its record does not say it ended ({})\n",
                   recorded_state(point));
        return 1;
      }
    }
    std::this_thread::sleep_for(request.poll);
  }
}

}  // namespace hpctrain::jobgen
