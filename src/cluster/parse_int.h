// Strict parsing of the non-negative integers SLURM puts in variables: the
// whole text must be digits ("4", not " 4", "4x" or "-1").
#pragma once

#include <charconv>
#include <optional>
#include <string_view>

namespace hpctrain::cluster {

inline std::optional<int> parse_non_negative(std::string_view text) {
  int value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || value < 0) return std::nullopt;
  return value;
}

}  // namespace hpctrain::cluster
