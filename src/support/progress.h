// Progress for long commands: a live, rewritten line on a terminal, and plain
// lines at a fixed interval when output goes to a log file (batch jobs).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace hpctrain::support {

class Progress {
 public:
  // `interval` applies to plain (non-terminal) output.
  explicit Progress(std::FILE* out, std::chrono::seconds interval = std::chrono::seconds(10));

  // Shows `line` now on a terminal (at most 10 times a second), or when the
  // interval has passed otherwise.
  void update(const std::string& line);
  // Ends the live line; the final state is always printed.
  void done(const std::string& line);

 private:
  std::FILE* out_;
  bool tty_;
  std::chrono::steady_clock::duration interval_;
  std::chrono::steady_clock::time_point last_{};
  std::size_t last_width_ = 0;
};

}  // namespace hpctrain::support
