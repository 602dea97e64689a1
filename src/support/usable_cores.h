// The cores this process may run on: its CPU affinity mask (what SLURM, taskset
// or a cgroup left it), not the machine's count, which a job step sharing a
// node would oversubscribe.
#pragma once

namespace hpctrain::support {

// At least 1.
int usable_cores();

}  // namespace hpctrain::support
