#include "jobgen/encoding.h"

#include <fmt/format.h>

namespace hpctrain::jobgen {

void refuse_control_characters(const std::string& value, const std::string& field) {
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      throw EncodingError(fmt::format("{}: control character 0x{:02x} at position {} is not allowed in a batch script",
                                      field, static_cast<unsigned>(c), i));
    }
  }
}

std::string sbatch_value(const std::string& value, const std::string& field) {
  refuse_control_characters(value, field);
  std::string out = "\"";
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string shell_word(const std::string& value, const std::string& field) {
  refuse_control_characters(value, field);
  std::string out = "'";
  for (const char c : value) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string shell_expanding(const std::string& value, const std::string& field) {
  refuse_control_characters(value, field);
  auto name_char = [](char c, bool first) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || (!first && c >= '0' && c <= '9');
  };
  auto refuse = [&](std::size_t at, const std::string& what) {
    throw EncodingError(fmt::format(
        "{}: {} at position {}: a run-time value may hold literal text, $NAME and ${{NAME}}, nothing that could run "
        "a command",
        field, what, at));
  };
  std::string out = "\"";
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '`') refuse(i, "a backtick");
    if (c != '$') {
      if (c == '\\' || c == '"') out += '\\';
      out += c;
      continue;
    }
    // $NAME or ${NAME}, written back as ${NAME}; anything else after a '$' is refused.
    const bool braced = i + 1 < value.size() && value[i + 1] == '{';
    std::size_t start = i + (braced ? 2 : 1);
    std::size_t end = start;
    while (end < value.size() && name_char(value[end], end == start)) ++end;
    if (end == start) refuse(i, fmt::format("'{}'", value.substr(i, 3)));
    if (braced && (end >= value.size() || value[end] != '}')) {
      refuse(i, fmt::format("'{}' (only ${{NAME}}, no operators)", value.substr(i, end - i + 2)));
    }
    out += "${" + value.substr(start, end - start) + "}";
    i = braced ? end : end - 1;
  }
  return out + "\"";
}

}  // namespace hpctrain::jobgen
