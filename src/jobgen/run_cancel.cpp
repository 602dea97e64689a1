#include "jobgen/run_cancel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <ctime>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "jobgen/encoding.h"
#include "jobgen/run_record.h"
#include "jobgen/shell_command.h"
#include "jobgen/slurm_states.h"
#include "support/text.h"

namespace hpctrain::jobgen {
namespace {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec);
}

// The record the batch script would have written had the job ended itself;
// one line, appended in one write (the script appends to the same file).
void record_cancel(const std::filesystem::path& dir, const std::string& id) {
  const auto underscore = id.find('_');
  const bool task = underscore != std::string::npos;
  const nlohmann::ordered_json line = {{"event", "cancel"},
                                       {"job_id", task ? id.substr(0, underscore) : id},
                                       {"array_job_id", task ? id.substr(0, underscore) : ""},
                                       {"array_task_id", task ? id.substr(underscore + 1) : ""},
                                       {"end", utc_now()},
                                       {"cause", "cancel"},
                                       {"outcome", "cancelled"},
                                       {"by", "jobgen cancel"}};
  std::ofstream out(dir / "jobs.jsonl", std::ios::app | std::ios::binary);
  out << line.dump() + "\n" << std::flush;
  if (!out) throw std::runtime_error(fmt::format("{}: cannot append the cancel record", (dir / "jobs.jsonl").string()));
}

}  // namespace

std::string cancel_run(const std::filesystem::path& run_dir, std::vector<std::string>& warnings) {
  const std::vector<RunPoint> run = read_run(run_dir);
  std::map<std::string, std::filesystem::path> owner;  // SLURM id -> the run directory that records it
  std::vector<std::string> ids;
  std::size_t unreadable = 0;
  for (const auto& point : run) {
    warnings.insert(warnings.end(), point.skipped.begin(), point.skipped.end());
    unreadable += point.skipped.size();
    for (const auto& id : job_ids(point)) {
      ids.push_back(id);
      owner[id] = point.dir;
    }
  }
  const std::vector<std::string> live = live_jobs(ids);
  const std::string dir = support::printable(run_dir.string());
  if (live.empty()) {
    return fmt::format("nothing to cancel: no job of {} is queued or running{}", dir,
                       unreadable == 0 ? ""
                                       : fmt::format(" among those its readable records name ({} line{} unreadable: a "
                                                     "job only they name is not known to jobgen)",
                                                     unreadable, unreadable == 1 ? "" : "s"));
  }
  std::string words;
  for (const auto& id : live) words += " " + shell_word(id, "job id");
  const CommandResult r = run_command("scancel" + words + " 2>&1");
  if (r.status != 0) {
    throw std::runtime_error(fmt::format("scancel{} failed: {}", words, support::printable(first_line(r.output))));
  }
  for (const auto& id : live) record_cancel(owner[id], id);
  return fmt::format("cancelled {} job{} of {}: {}", live.size(), live.size() == 1 ? "" : "s", dir,
                     fmt::join(live, " "));
}

}  // namespace hpctrain::jobgen
