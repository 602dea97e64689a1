#include "jobgen/run_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "jobgen/data_file.h"
#include "jobgen/mustache.h"
#include "support/bounded_file.h"
#include "support/text.h"

namespace hpctrain::jobgen {
namespace {

using support::printable;

// 1 to `max` decimal digits: what SLURM prints for a job id (12) or an array index (9).
bool digits(const std::string& text, std::size_t max) {
  return !text.empty() && text.size() <= max && text.find_first_not_of("0123456789") == std::string::npos;
}
bool job_id_shape(const std::string& text) { return digits(text, 12); }
bool task_id_shape(const std::string& text) { return digits(text, 9); }

// A string member, or empty when absent; anything else makes the line no record.
std::string text_of(const nlohmann::json& line, const char* key) {
  const auto it = line.find(key);
  if (it == line.end() || it->is_null()) return {};
  if (!it->is_string()) throw RunDirError(fmt::format("\"{}\" is not a string", key));
  return it->get<std::string>();
}

std::optional<long> integer_of(const nlohmann::json& line, const char* key, long max) {
  const auto it = line.find(key);
  if (it == line.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > max) {
    throw RunDirError(fmt::format("\"{}\" is not a whole number from 0 to {}", key, max));
  }
  return static_cast<long>(it->get<std::int64_t>());
}

JobEvent parse_event(const std::string& text) {
  if (text.size() > kMaxRecordLine) throw RunDirError(fmt::format("longer than {} bytes", kMaxRecordLine));
  const auto line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (line.is_discarded() || !line.is_object()) throw RunDirError("not a JSON object");
  JobEvent e;
  const std::string event = text_of(line, "event");
  // "cancel": written by `jobgen cancel` (run_cancel.h); it ends the run like an end record.
  if (event != "start" && event != "end" && event != "cancel") {
    throw RunDirError("\"event\" is none of start, end, cancel");
  }
  e.start = event == "start";
  e.job_id = text_of(line, "job_id");
  if (e.job_id != "local" && !job_id_shape(e.job_id)) {
    throw RunDirError(fmt::format("job id '{}' is not a SLURM job id", printable(e.job_id)));
  }
  e.array_job_id = text_of(line, "array_job_id");
  e.array_task_id = text_of(line, "array_task_id");
  if (e.array_job_id.empty() != e.array_task_id.empty() ||
      (!e.array_job_id.empty() && (!job_id_shape(e.array_job_id) || !task_id_shape(e.array_task_id)))) {
    throw RunDirError(fmt::format("array job '{}' task '{}' is not an array task", printable(e.array_job_id),
                                  printable(e.array_task_id)));
  }
  e.restarts = integer_of(line, "restarts", 1000000).value_or(0);
  e.nodes = text_of(line, "nodes");
  e.started = text_of(line, "start");
  e.ended = text_of(line, "end");
  e.cause = text_of(line, "cause");
  e.outcome = text_of(line, "outcome");
  e.exit_status = integer_of(line, "exit_status", 255);
  e.next_job_id = text_of(line, "next_job_id");
  if (!e.next_job_id.empty() && !job_id_shape(e.next_job_id)) {
    throw RunDirError(fmt::format("next job id '{}' is not a SLURM job id", printable(e.next_job_id)));
  }
  e.log = text_of(line, "log");
  if (!e.log.empty() && (e.log.front() != '/' || printable(e.log) != e.log)) {
    throw RunDirError(fmt::format("log '{}' is not an absolute path", printable(e.log)));
  }
  return e;
}

RunPoint read_point(std::string index, const std::filesystem::path& dir) {
  RunPoint point{std::move(index), dir, {}, {}};
  const std::filesystem::path file = dir / "jobs.jsonl";
  std::error_code missing;
  if (!std::filesystem::exists(file, missing)) return point;  // an array task that has not started
  std::istringstream lines(support::read_bounded_file(file, kMaxRecordBytes, "run record"));
  std::size_t number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    try {
      point.events.push_back(parse_event(line));
    } catch (const RunDirError& e) {
      // A half-written line (a job killed mid-write) or an edit: named, not fatal.
      point.skipped.push_back(fmt::format("{}:{}: not a run record: {}", printable(file.string()), number, e.what()));
    }
  }
  return point;
}

bool continues(const std::string& outcome) {
  return outcome == "requeued" || outcome == "requeued_by_slurm" || outcome == "resubmitted";
}

}  // namespace

bool is_slurm_id(const std::string& text) {
  const auto underscore = text.find('_');
  if (underscore == std::string::npos) return job_id_shape(text);
  return job_id_shape(text.substr(0, underscore)) && task_id_shape(text.substr(underscore + 1));
}

std::string slurm_id(const JobEvent& event) {
  return event.array_task_id.empty() ? event.job_id : event.array_job_id + "_" + event.array_task_id;
}

std::vector<std::string> job_ids(const RunPoint& point) {
  std::vector<std::string> ids;
  auto add = [&ids](const std::string& id) {
    if (id != "local" && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (const auto& e : point.events) {
    add(slurm_id(e));
    // A resubmitted array task runs as index TASK of a new array.
    if (!e.next_job_id.empty()) add(e.array_task_id.empty() ? e.next_job_id : e.next_job_id + "_" + e.array_task_id);
  }
  return ids;
}

bool ended_for_good(const RunPoint& point) {
  return !point.events.empty() && !point.events.back().start && !continues(point.events.back().outcome);
}

std::string recorded_state(const RunPoint& point) {
  if (point.events.empty()) return "submitted";
  const JobEvent& last = point.events.back();
  if (last.start) return "running";
  return last.outcome.empty() ? "ended" : last.outcome;
}

bool trained_outside_slurm(const std::filesystem::path& dir) {
  std::error_code error;
  return !std::filesystem::exists(dir / "jobs.jsonl", error) &&
         !std::filesystem::exists(dir / "sweep-manifest.json", error) &&
         std::filesystem::exists(dir / "metrics.jsonl", error);
}

std::vector<RunPoint> read_run(const std::filesystem::path& dir) {
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) {
    throw RunDirError(fmt::format("{}: no such run directory (the batch script creates it when a job starts)",
                                  printable(dir.string())));
  }
  const std::filesystem::path manifest = dir / "sweep-manifest.json";
  if (std::filesystem::exists(manifest, error)) {
    nlohmann::json points;
    try {
      points =
          parse_data(support::read_bounded_file(manifest, kMaxDataBytes, "sweep manifest"), manifest.string(), false);
    } catch (const RenderError& e) {
      throw RunDirError(e.what());  // not JSON, or nested too deep: named as the run's error
    } catch (const support::InputError& e) {
      throw RunDirError(e.what());
    }
    std::set<long> indices;
    for (const auto& [key, value] : points.items()) {
      if (!task_id_shape(key)) {
        throw RunDirError(fmt::format("{}: '{}' is not an array index", printable(manifest.string()), printable(key)));
      }
      indices.insert(std::stol(key));
    }
    if (indices.empty()) throw RunDirError(fmt::format("{}: no sweep points", printable(manifest.string())));
    std::vector<RunPoint> run;
    run.reserve(indices.size());
    for (const long i : indices) run.push_back(read_point(std::to_string(i), dir / std::to_string(i)));
    return run;
  }
  if (trained_outside_slurm(dir)) {
    throw RunDirError(
        fmt::format("{}: trained outside SLURM (no jobs.jsonl: no job of it was submitted through jobgen): its log is "
                    "{}/logs/rank-0.log, `jobgen status {}` reads its metrics, and it stops on Ctrl-C or SIGTERM",
                    printable(dir.string()), printable(dir.string()), printable(dir.string())));
  }
  if (!std::filesystem::exists(dir / "jobs.jsonl", error)) {
    throw RunDirError(
        fmt::format("{}: not a run directory (no jobs.jsonl or sweep-manifest.json: a job of the run "
                    "writes them when it starts)",
                    printable(dir.string())));
  }
  return {read_point("", dir)};
}

}  // namespace hpctrain::jobgen
