// Running untrusted parsing in a forked child process, so that a crash inside
// a library we do not own (libhdf5 on a crafted file: docs/security.md) ends
// the child, and the caller reports it, instead of ending hpctrain.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace hpctrain::support {

struct ChildResult {
  std::optional<std::string> output;  // what `work` returned; empty when the child died
  std::string death;                  // how it died, e.g. "killed by SIGFPE (Floating point exception)"
  int signal = 0;                     // the signal that killed it, if one did
};

// Calls `work` in a child process made with fork() and returns its result, or
// how the child died. The child only runs `work` and leaves with _exit(): it
// must not use MPI, CUDA or threads of the parent. An exception from `work`
// comes back as a death naming its message.
ChildResult run_in_child(const std::function<std::string()>& work);

}  // namespace hpctrain::support
