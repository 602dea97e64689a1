// This process's peak resident memory, as the kernel counts it: the number a
// scheduler's memory limit (SLURM's cgroup, --mem) is checked against, and
// the one bench/scale.sh compares across reducers.
#pragma once

#include <cstdint>

namespace hpctrain::runtime {

// VmHWM from /proc/self/status in bytes; -1 where the kernel has no such file.
std::int64_t peak_resident_bytes();

}  // namespace hpctrain::runtime
