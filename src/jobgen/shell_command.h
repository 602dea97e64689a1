// Running the few commands jobgen asks things of (git for provenance, sbatch
// to submit or to judge an option): through /bin/sh, words already encoded by
// the caller (encoding.h), output bounded.
#pragma once

#include <string>

namespace hpctrain::jobgen {

struct CommandResult {
  int status = -1;     // pclose's wait status; -1 when the command could not start
  std::string output;  // the first 64 KiB of its standard output
};

CommandResult run_command(const std::string& command);

// Text up to its first newline: the line of a tool's answer that says why.
std::string first_line(const std::string& text);

// The first line of a command's output; empty when it prints nothing.
std::string first_line_of(const std::string& command);

}  // namespace hpctrain::jobgen
