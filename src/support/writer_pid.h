// The process id a temporary's name ends with (NAME.tmp-PID, DIR.old-PID),
// and whether that process still runs on this host: what tells a dead
// writer's leftovers, which may go, from a write in progress, which may not.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>

namespace hpctrain::support {

// The pid `digits` spell: 1 to 9 decimal digits and nothing else (a suffix
// such as "backup" is no pid, so no leftover of ours).
std::optional<pid_t> pid_in_name(std::string_view digits);

// Whether a process of that pid runs on this host (any answer but "no such
// process" counts as running: a process of another user's, for one).
bool runs_on_this_host(pid_t pid);

}  // namespace hpctrain::support
