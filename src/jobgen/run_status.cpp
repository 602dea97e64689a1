#include "jobgen/run_status.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "jobgen/slurm_states.h"
#include "support/bounded_file.h"
#include "support/input_file.h"
#include "support/text.h"

namespace hpctrain::jobgen {
namespace {

using support::printable;

constexpr std::uint64_t kMetricsTail = std::uint64_t{1} << 20;
// Steps and counts as JSON numbers: whole, from 0 to 2^53 (where a double
// stops holding every integer); anything else in a file from elsewhere is no
// count (and casting it would be undefined).
constexpr double kMaxCount = 9007199254740992.0;

std::optional<double> number(const nlohmann::json& record, const char* key) {
  const auto it = record.find(key);
  if (it == record.end() || !it->is_number()) return std::nullopt;
  const double value = it->get<double>();
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<long long> count(const nlohmann::json& record, const char* key) {
  const auto value = number(record, key);
  if (!value || *value < 0 || *value > kMaxCount || std::floor(*value) != *value) return std::nullopt;
  return static_cast<long long>(*value);
}

std::string or_dash(const std::optional<double>& value, const char* format) {
  return value ? fmt::format(fmt::runtime(format), *value) : "-";
}

// Columns padded to their widest cell, two spaces apart.
std::string render_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += c + 1 == row.size() ? row[c] : fmt::format("{:<{}}  ", row[c], width[c]);
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace

Progress read_progress(const std::filesystem::path& run_dir) {
  Progress p;
  // Opened without blocking and checked on the descriptor: a FIFO planted as
  // metrics.jsonl is refused (InputError) instead of waited on for ever.
  const auto file = support::InputFile::open_if_present(run_dir / "metrics.jsonl", "metrics file");
  if (!file) return p;
  const std::uint64_t size = file->size();
  const std::uint64_t from = size > kMetricsTail ? size - kMetricsTail : 0;
  std::istringstream in(file->read_at(from, static_cast<std::size_t>(size - from)));
  std::string line;
  if (from > 0) std::getline(in, line);  // the first line read from the middle is only a tail
  while (std::getline(in, line)) {
    const auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded() || !record.is_object()) continue;  // a line being written right now
    const auto kind_it = record.find("kind");
    const std::string kind = kind_it != record.end() && kind_it->is_string() ? kind_it->get<std::string>() : "";
    if (kind == "train") {
      p.finished = false;  // a run resumed past its end trains again
      if (const auto step = count(record, "step")) p.step = *step;
      if (const auto total = count(record, "steps_total")) p.steps_total = *total;
      p.loss = number(record, "loss");
      p.tokens_per_s = number(record, "tokens_per_s");
      p.eta_s = number(record, "eta_s");
    } else if (kind == "eval" || kind == "summary") {
      if (const auto loss = number(record, "eval_loss")) p.eval_loss = loss;
      if (const auto step = count(record, "step"); step && kind == "summary") p.step = *step;
      if (kind == "summary") p.finished = true;
    }
  }
  return p;
}

std::string newest_checkpoint(const std::filesystem::path& run_dir) {
  // The names hpctrain writes (ckpt_file/checkpoint_files.h): zero-padded
  // steps, so a longer name is a later step and equal lengths compare as text.
  // Read by name only: jobgen links no HDF5, and verifying is `hpctrain ckpt verify`'s job.
  std::string newest;
  std::error_code error;
  std::filesystem::directory_iterator it(run_dir / "checkpoints", error);
  for (std::size_t seen = 0; !error && it != std::filesystem::directory_iterator() && seen < 1000000;
       it.increment(error), ++seen) {
    const std::string name = it->path().filename().string();
    const bool checkpoint = name.size() >= 16 && name.size() <= 26 && name.starts_with("step-") &&
                            name.ends_with(".h5") &&
                            name.find_first_not_of("0123456789", 5) == name.size() - 3;  // step-DIGITS.h5
    if (!checkpoint) continue;
    if (newest.empty() || name.size() > newest.size() || (name.size() == newest.size() && name > newest)) newest = name;
  }
  return newest;
}

namespace {

std::string step_of_total(const Progress& p) {
  if (!p.step) return "-";
  return p.steps_total ? fmt::format("{}/{}", *p.step, *p.steps_total) : std::to_string(*p.step);
}

// read_progress, with a metrics.jsonl that cannot be read (a FIFO planted
// there) listed on `warnings` and an empty Progress for the row.
Progress progress_or_warning(const std::filesystem::path& run_dir, std::vector<std::string>& warnings) {
  try {
    return read_progress(run_dir);
  } catch (const support::InputError& e) {
    warnings.push_back(printable(e.what()));
    return {};
  }
}

std::string local_status_table(const std::filesystem::path& run_dir, std::vector<std::string>& warnings) {
  const Progress p = progress_or_warning(run_dir, warnings);
  // Without SLURM nothing says whether an unfinished run still runs.
  const std::string state = p.finished ? "finished" : "not finished (running, or stopped)";
  const std::string checkpoint = newest_checkpoint(run_dir);
  const std::vector<std::vector<std::string>> rows = {
      {"STATE", "STEP", "LOSS", "EVAL", "TOK/S", "CHECKPOINT"},
      {state, step_of_total(p), or_dash(p.loss, "{:.4f}"), or_dash(p.eval_loss, "{:.4f}"),
       or_dash(p.tokens_per_s, "{:.0f}"), checkpoint.empty() ? "-" : checkpoint}};
  return fmt::format("run {}: trained outside SLURM (no jobs.jsonl); from its metrics.jsonl, log in logs/rank-0.log\n",
                     printable(run_dir.string())) +
         render_table(rows);
}

}  // namespace

std::string status_table(const std::filesystem::path& run_dir, std::vector<std::string>& warnings) {
  if (trained_outside_slurm(run_dir)) return local_status_table(run_dir, warnings);
  const std::vector<RunPoint> run = read_run(run_dir);
  std::vector<std::string> newest;  // per point: the id SLURM is asked about
  std::vector<std::string> all;
  for (const auto& point : run) {
    const auto ids = job_ids(point);
    newest.push_back(ids.empty() ? std::string{} : ids.back());
    if (!ids.empty()) all.push_back(ids.back());
    warnings.insert(warnings.end(), point.skipped.begin(), point.skipped.end());
  }
  const SlurmStates slurm = query_slurm_states(all);

  std::vector<std::vector<std::string>> rows;
  rows.push_back({"INDEX", "JOB", "STATE", "RESTARTS", "STEP", "LOSS", "EVAL", "TOK/S", "ETA", "CHECKPOINT"});
  for (std::size_t i = 0; i < run.size(); ++i) {
    const RunPoint& point = run[i];
    const Progress p = progress_or_warning(point.dir, warnings);
    // SLURM's word where it has one; else the run record's, in lower case.
    const auto it = slurm.state.find(newest[i]);
    // The record's word comes from a file anyone in the project may write.
    const std::string state = printable(it != slurm.state.end() ? it->second : recorded_state(point));
    const std::string step = step_of_total(p);
    const std::string eta = state == "RUNNING" && p.eta_s ? support::format_duration(*p.eta_s) : "-";
    const std::string checkpoint = newest_checkpoint(point.dir);
    rows.push_back({point.index.empty() ? "-" : point.index, newest[i].empty() ? "-" : newest[i], state,
                    point.events.empty() ? "0" : std::to_string(point.events.back().restarts), step,
                    or_dash(p.loss, "{:.4f}"), or_dash(p.eval_loss, "{:.4f}"), or_dash(p.tokens_per_s, "{:.0f}"), eta,
                    checkpoint.empty() ? "-" : checkpoint});
  }
  return fmt::format("run {}: {} {}; SLURM states from {}\n", printable(run_dir.string()), run.size(),
                     run.size() == 1 ? "job chain" : "array indices", slurm.source.empty() ? "nothing" : slurm.source) +
         render_table(rows);
}

}  // namespace hpctrain::jobgen
