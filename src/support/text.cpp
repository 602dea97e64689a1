#include "support/text.h"

#include <fmt/format.h>

#include <cmath>

namespace hpctrain::support {
namespace {

// The length of the well-formed UTF-8 sequence at text[i] and its code point,
// or 0 when the bytes there are not one (a stray continuation byte, an
// overlong form, a surrogate, a sequence cut short).
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& code) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1FU;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0FU;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07U;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0U) != 0x80U) return 0;
    code = (code << 6U) | (byte(k) & 0x3FU);
  }
  const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
  if (overlong || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF) return 0;
  return length;
}

// Characters a terminal acts on instead of showing: the C1 controls (U+009B
// is CSI, as ESC [ is), the line and paragraph separators, and the
// bidirectional marks, overrides and isolates, which reorder what follows.
bool acts_on_terminal(char32_t code) {
  return (code >= 0x80 && code <= 0x9F) || code == 0x061C || code == 0x200E || code == 0x200F || code == 0x2028 ||
         code == 0x2029 || (code >= 0x202A && code <= 0x202E) || (code >= 0x2066 && code <= 0x2069);
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x80) {
      if (u < 0x20 || u == 0x7f) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned>(u));
      } else {
        out += text[i];
      }
      ++i;
      continue;
    }
    char32_t code = 0;
    const std::size_t length = utf8_sequence(text, i, code);
    if (length == 0) {
      // Not UTF-8: a lone byte from 0x80 to 0x9F is a C1 control to a
      // terminal in an 8-bit mode.
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(u));
      ++i;
    } else if (acts_on_terminal(code)) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned>(code));
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string printable_lines(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '\n' || text[i] == '\t') {
      out += printable(text.substr(start, i - start));
      if (i < text.size()) out += text[i];
      start = i + 1;
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
  // Beyond a million hours (or not a number) no figure helps: a record from
  // elsewhere may say anything, and a cast out of range is undefined.
  if (!(seconds >= 0 && seconds < 3.6e9)) return "-";
  const auto s = static_cast<long long>(seconds);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60) : fmt::format("{}m{:02}s", s / 60, s % 60);
}

}  // namespace hpctrain::support
