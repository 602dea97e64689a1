#include "jobgen/shell_command.h"

#include <array>
#include <cstdio>

namespace hpctrain::jobgen {

CommandResult run_command(const std::string& command) {
  constexpr std::size_t kMaxOutput = 65536;
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {};
  CommandResult result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  // Read to the end, keeping the first kMaxOutput bytes: the command must not
  // block on a full pipe.
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    if (result.output.size() < kMaxOutput) result.output.append(buffer.data(), n);
  }
  result.status = pclose(pipe);
  return result;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

std::string first_line_of(const std::string& command) { return first_line(run_command(command).output); }

}  // namespace hpctrain::jobgen
