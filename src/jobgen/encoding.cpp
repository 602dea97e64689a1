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

std::string printable(const std::string& value) {
  std::string out;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u == 0x7f ? fmt::format("\\x{:02x}", static_cast<unsigned>(u)) : std::string(1, c);
  }
  return out;
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
  if (value.find("$(") != std::string::npos || value.find('`') != std::string::npos) {
    throw EncodingError(
        fmt::format("{}: a run-time value may expand $VAR or ${{VAR}}, not run commands ($( or `)", field));
  }
  std::string out = "\"";
  for (const char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace hpctrain::jobgen
