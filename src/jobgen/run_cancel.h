// `jobgen cancel`: cancels every queued or running job of a run (a job chain's
// newest job, or each array index of a sweep) with one `scancel`, after one
// `squeue` has said which of the run's jobs are still there, and appends a
// "cancel" record to each index's jobs.jsonl so that `status` and `logs`
// know the run ended on purpose. Only jobs the run record names are touched.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace hpctrain::jobgen {

// What was done, one line ("cancelled 2 jobs of RUN_DIR: 12_0 12_1", or
// that there was nothing to cancel). Record lines that could not be read go
// to `warnings`, one each: a job only they name is not cancelled.
std::string cancel_run(const std::filesystem::path& run_dir, std::vector<std::string>& warnings);

}  // namespace hpctrain::jobgen
