#include "jobgen/slurm_states.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "jobgen/encoding.h"
#include "jobgen/run_record.h"
#include "jobgen/shell_command.h"
#include "support/text.h"

namespace hpctrain::jobgen {
namespace {

// Ids per command: one argument may hold 128 KiB (MAX_ARG_STRLEN), and the
// answer is read up to 64 KiB (shell_command.h); 1024 ids fit both. A run of
// up to 1024 jobs is one call.
constexpr std::size_t kIdsPerCall = 1024;

std::vector<std::string> id_lists(const std::vector<std::string>& ids) {
  std::vector<std::string> lists;
  for (std::size_t i = 0; i < ids.size(); i += kIdsPerCall) {
    std::string list;
    for (std::size_t j = i; j < std::min(ids.size(), i + kIdsPerCall); ++j) list += (list.empty() ? "" : ",") + ids[j];
    lists.push_back(shell_word(list, "job ids"));
  }
  return lists;
}

// "ID|STATE ..." lines, ID being 123 or 123_4; the state's first word
// ("CANCELLED by 1000" -> CANCELLED). Anything else (a warning) is passed over.
void read_states(const std::string& output, std::map<std::string, std::string>& into) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    const auto bar = line.find('|');
    if (bar == std::string::npos || bar == 0 || bar > 22) continue;
    const std::string id = line.substr(0, bar);
    const std::string state = line.substr(bar + 1, line.find(' ', bar) - bar - 1);
    if (is_slurm_id(id) && !state.empty() && state.size() <= 32 &&
        state.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == std::string::npos) {
      into[id] = state;
    }
  }
}

// squeue of ids it has forgotten says so and fails; that only means none is queued.
std::map<std::string, std::string> ask_squeue(const std::vector<std::string>& ids) {
  std::map<std::string, std::string> states;
  for (const auto& list : id_lists(ids)) {
    const CommandResult r = run_command("squeue --noheader --array --format='%i|%T' --jobs=" + list + " 2>&1");
    if (r.status != 0 && r.output.find("Invalid job id") == std::string::npos) {
      throw std::runtime_error(fmt::format("squeue failed: {}", support::printable(first_line(r.output))));
    }
    read_states(r.output, states);
  }
  return states;
}

}  // namespace

SlurmStates query_slurm_states(const std::vector<std::string>& ids) {
  SlurmStates out;
  if (ids.empty()) return out;
  // -X: the allocation's line, not one per step. With --jobs, sacct looks
  // back to the epoch, so finished jobs are found too.
  std::string refusal;
  for (const auto& list : id_lists(ids)) {
    const CommandResult r =
        run_command("sacct --noheader --parsable2 --allocations --format=JobID,State --jobs=" + list + " 2>&1");
    if (r.status != 0) {
      refusal = r.status == -1 || r.output.empty() ? "sacct did not run" : support::printable(first_line(r.output));
      break;
    }
    read_states(r.output, out.state);
  }
  if (refusal.empty()) {
    out.source = "sacct";
    out.complete = true;
    return out;
  }
  // No accounting (sacct: "Slurm accounting storage is disabled"): the queue
  // knows the live jobs; the run record tells how the others ended.
  try {
    out.state = ask_squeue(ids);
    out.source = fmt::format("squeue and the run record (sacct: {})", refusal);
  } catch (const std::runtime_error& e) {
    // No controller answers (a machine outside the cluster): the record still tells a lot.
    out.source = fmt::format("the run record alone (sacct: {}; {})", refusal, e.what());
  }
  return out;
}

std::vector<std::string> live_jobs(const std::vector<std::string>& ids) {
  std::vector<std::string> live;
  if (ids.empty()) return live;
  const auto states = ask_squeue(ids);
  for (const auto& id : ids) {
    if (states.contains(id)) live.push_back(id);
  }
  return live;
}

}  // namespace hpctrain::jobgen
