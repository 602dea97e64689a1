// A run directory as the batch script leaves it (templates/sbatch.mustache):
// RUN_DIR/jobs.jsonl holds one JSON line per start and end of a job of the
// run; a sweep's directory holds sweep-manifest.json and one such run
// directory per array index (RUN_DIR/0, RUN_DIR/1, ...). `jobgen status`,
// `logs` and `cancel` read it; the file may have been edited by anyone, so
// sizes are bounded and every id is checked before it reaches a command line.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace hpctrain::jobgen {

class RunDirError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr std::size_t kMaxRecordBytes = std::size_t{16} << 20;  // jobs.jsonl
constexpr std::size_t kMaxRecordLine = 8192;

// One line of jobs.jsonl.
struct JobEvent {
  bool start = false;  // "start"; else "end", or "cancel" (by `jobgen cancel`)
  std::string job_id;  // SLURM_JOB_ID: digits, or "local" outside SLURM
  std::string array_job_id;
  std::string array_task_id;  // empty outside an array
  long restarts = 0;
  std::string nodes;
  std::string started;
  std::string ended;
  std::string cause;    // end: none, early_warning, time_limit, preemption, cancel
  std::string outcome;  // end: finished, failed, requeued, requeued_by_slurm, resubmitted, ...
  std::optional<long> exit_status;
  std::string next_job_id;  // end, resubmitted: the next job (its array job id for an array task)
  std::string log;          // start: the job's output file, as SLURM opened it
};

// What SLURM calls this job: ARRAYJOB_TASK for an array task, else the job id.
std::string slurm_id(const JobEvent& event);

// Whether `text` has that shape: a job id of 1 to 12 digits, optionally
// followed by _ and an array index of 1 to 9 digits.
bool is_slurm_id(const std::string& text);

// One run: a single job's directory, or one index of a sweep.
struct RunPoint {
  std::string index;  // the array index; empty for a run that is not a sweep
  std::filesystem::path dir;
  std::vector<JobEvent> events;      // in the file's order
  std::vector<std::string> skipped;  // "FILE:LINE: why" for lines that are not records
};

// Every SLURM id the run has used or will use next, oldest first, each once
// (a requeued job keeps its id; a resubmission adds the next one).
std::vector<std::string> job_ids(const RunPoint& point);

// The run will not continue by itself: its last record is an end whose
// outcome is neither a requeue nor a resubmission.
bool ended_for_good(const RunPoint& point);

// Whether it ended, and the last end record's outcome, or "running" after a
// start, or "submitted" before any record.
std::string recorded_state(const RunPoint& point);

// Whether `dir` holds a run trained outside SLURM (`mpiexec hpctrain`): no
// run record and no sweep manifest, but hpctrain's metrics.jsonl.
bool trained_outside_slurm(const std::filesystem::path& dir);

// The run at `dir`: one point, or one per index of a sweep, in index order.
// Throws RunDirError naming `dir` when it is neither (saying so for a run
// trained outside SLURM).
std::vector<RunPoint> read_run(const std::filesystem::path& dir);

}  // namespace hpctrain::jobgen
