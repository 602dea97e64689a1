// The SLURM state of many jobs in one question to the controller: one `sacct`
// call for all of them (it remembers jobs after they leave the queue), and,
// where the site runs no accounting, one `squeue` call instead. Never one call
// per job: a sweep of a thousand points polled job by job is what brings a
// controller to its knees.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace hpctrain::jobgen {

struct SlurmStates {
  std::map<std::string, std::string> state;  // SLURM id (123 or 123_4) -> RUNNING, PENDING, COMPLETED, ...
  std::string source;                        // which command answered, and why that one
  bool complete = false;                     // sacct answered: an id without a state is unknown to SLURM, not just gone
};

// `ids` are SLURM ids checked by the run record reader (digits, or
// digits_digits). Asks nothing when `ids` is empty. When neither command
// answers, `state` is empty and `source` says why.
SlurmStates query_slurm_states(const std::vector<std::string>& ids);

// The ids among `ids` that are queued or running, by one `squeue` call;
// throws when squeue cannot answer.
std::vector<std::string> live_jobs(const std::vector<std::string>& ids);

}  // namespace hpctrain::jobgen
