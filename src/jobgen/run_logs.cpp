#include "jobgen/run_logs.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "jobgen/run_record.h"
#include "jobgen/slurm_states.h"
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
    std::ifstream in(file.path, std::ios::binary);
    std::error_code error;
    if (!in || !std::filesystem::is_regular_file(file.path, error)) return;  // not opened by SLURM yet
    const auto size = std::filesystem::file_size(file.path, error);
    if (error) return;
    auto& offset = offsets_[file.path];
    if (size < offset) offset = 0;  // truncated: a requeued job that opened its file afresh
    if (size == offset) return;
    if (current_ != file.path) {
      fmt::print(out_, "==> {} (job {}) <==\n", printable(file.path), file.job);
      current_ = file.path;
    }
    in.seekg(static_cast<std::streamoff>(offset));
    std::array<char, 65536> buffer{};
    std::uintmax_t left = size - offset;
    while (left > 0 && in) {
      in.read(buffer.data(), static_cast<std::streamsize>(std::min<std::uintmax_t>(left, buffer.size())));
      const auto n = static_cast<std::size_t>(in.gcount());
      if (n == 0) break;
      (void)std::fwrite(buffer.data(), 1, n, out_);
      left -= n;
      offset += n;
    }
    (void)std::fflush(out_);
  }

 private:
  std::FILE* out_;
  std::map<std::string, std::uintmax_t> offsets_;
  std::string current_;
};

}  // namespace

int print_logs(const LogsRequest& request, std::FILE* out) {
  LogPrinter printer(out);
  auto last_check = Clock::now();
  int empty_queue_checks = 0;
  while (true) {
    const RunPoint point = select_point(request);
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
