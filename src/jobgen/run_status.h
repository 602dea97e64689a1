// `jobgen status`: one table for a run, or a sweep's runs (a row per array
// index): SLURM's state of the run's newest job, restarts, the last step of
// the total, last training and evaluation loss, tokens/s, the ETA while it
// runs, and the newest checkpoint. SLURM is asked once for all rows
// (slurm_states.h), never for a run trained outside SLURM; the rest comes from
// the run directory: the run record
// (run_record.h), rank 0's metrics.jsonl and RUN_DIR/checkpoints/.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "jobgen/run_record.h"

namespace hpctrain::jobgen {

// What the newest records of metrics.jsonl say.
struct Progress {
  std::optional<long long> step;
  std::optional<long long> steps_total;
  std::optional<double> loss;
  std::optional<double> eval_loss;
  std::optional<double> tokens_per_s;
  std::optional<double> eta_s;
  bool finished = false;  // the run's summary record was read: training ended
};

// From the last 1 MiB of RUN_DIR/metrics.jsonl (a long run's file can hold
// millions of lines); nothing when there is none. Throws support::InputError
// when it is no regular file (a FIFO there would block a reader for ever).
Progress read_progress(const std::filesystem::path& run_dir);

// The newest RUN_DIR/checkpoints/step-NNNNNNNN.h5 by its step; empty when none.
std::string newest_checkpoint(const std::filesystem::path& run_dir);

// The table, with a line naming the run and which SLURM command answered.
// Lines of the run record that are not records are listed on `warnings`. A
// run trained outside SLURM (no run record, but hpctrain's metrics.jsonl, as
// the README's mpiexec command leaves it) gets one row from its own files.
std::string status_table(const std::filesystem::path& run_dir, std::vector<std::string>& warnings);

}  // namespace hpctrain::jobgen
