#include "support/text.h"

#include <fmt/format.h>

namespace hpctrain::support {

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(u));
    } else {
      out += c;
    }
  }
  return out;
}

LineColumn line_column(std::string_view text, std::size_t offset) {
  LineColumn at;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60) : fmt::format("{}m{:02}s", s / 60, s % 60);
}

}  // namespace hpctrain::support
