// The harnesses' common input format: several strings in one input,
// separated by NUL bytes (a NUL cannot occur in any of them where they land).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hpctrain::fuzz {

inline std::vector<std::string> split_at_nul(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t nul = input.find('\0', start);
    parts.push_back(input.substr(start, nul - start));
    if (nul == std::string::npos) return parts;
    start = nul + 1;
  }
}

}  // namespace hpctrain::fuzz
