// A structure-aware addition to libFuzzer's mutations, for harnesses whose
// input is text holding sizes and counts (JSON, TOML), optionally followed by
// a NUL byte and a binary payload the text describes. Bugs in size arithmetic
// (a count times an element size that wraps, a count past INT_MAX) need one
// field set to one exact boundary value, with the payload's length to match;
// libFuzzer's byte mutations change a number a digit or a bit at a time and
// shrink a payload a few bytes at a time, so they almost never get there.
// Here, one time in four, a run of ASCII digits in the text (with its '-') is
// replaced by a boundary integer: 0 or +-(2^k + d) for k in 0, 7, 8, 15, 16,
// 31, 32, 53, 62, 63, 64 and d in -1, 0, 1; one time in eight the payload is
// cut to a random length, to none half of those times. Otherwise libFuzzer
// mutates as usual. libFuzzer applies up to five mutations in a row, so a
// boundary value and a cut payload meet in one input. Include it in exactly
// one translation unit of a harness.
//
// The GCC-built replay driver never mutates: LLVMFuzzerMutate is declared weak
// so the harness links there without libFuzzer.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size)
    __attribute__((weak));

namespace number_mutator {

inline bool is_digit(std::uint8_t c) { return c >= '0' && c <= '9'; }

// A boundary integer as decimal text.
inline std::string boundary_value(std::minstd_rand& random) {
  static constexpr std::array<int, 11> kExponents = {0, 7, 8, 15, 16, 31, 32, 53, 62, 63, 64};
  if (random() % 16 == 0) return "0";
  const auto exponent = kExponents[random() % kExponents.size()];
  const auto delta = static_cast<int>(random() % 3) - 1;
  std::string digits;
  if (exponent == 64) {  // past 64 bits: 2^64 - 1, 2^64, 2^64 + 1
    digits = "1844674407370955161" + std::to_string(6 + delta);
  } else {
    const std::uint64_t power = std::uint64_t{1} << exponent;
    digits = std::to_string(delta < 0 ? power - 1 : power + static_cast<std::uint64_t>(delta));
  }
  return random() % 4 == 0 ? "-" + digits : digits;
}

// Replaces one digit run of data[0, text_end) by a boundary value; 0 when the
// text has no digits or the result would not fit max_size.
inline std::size_t replace_number(std::uint8_t* data, std::size_t size, std::size_t max_size, std::size_t text_end,
                                  std::minstd_rand& random) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;  // [begin, end)
  for (std::size_t i = 0; i < text_end;) {
    if (!is_digit(data[i])) {
      ++i;
      continue;
    }
    const std::size_t begin = i > 0 && data[i - 1] == '-' ? i - 1 : i;
    while (i < text_end && is_digit(data[i])) ++i;
    runs.emplace_back(begin, i);
  }
  if (runs.empty()) return 0;
  const auto [begin, end] = runs[random() % runs.size()];
  const std::string value = boundary_value(random);
  const std::size_t new_size = size - (end - begin) + value.size();
  if (new_size > max_size) return 0;
  std::memmove(data + begin + value.size(), data + end, size - end);
  std::copy(value.begin(), value.end(), data + begin);
  return new_size;
}

// Cuts the payload after the first NUL; 0 when there is none to cut.
inline std::size_t cut_payload(std::size_t size, std::size_t text_end, std::minstd_rand& random) {
  if (text_end + 1 >= size) return 0;
  const std::size_t payload = size - text_end - 1;
  const std::size_t kept = random() % 2 == 0 ? 0 : random() % payload;
  return text_end + 1 + kept;
}

}  // namespace number_mutator

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::minstd_rand random(seed);
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  const std::size_t text_end = nul == nullptr ? size : static_cast<std::size_t>(nul - data);
  std::size_t mutated = 0;
  switch (random() % 8) {
    case 0:
    case 1: mutated = number_mutator::replace_number(data, size, max_size, text_end, random); break;
    case 2: mutated = number_mutator::cut_payload(size, text_end, random); break;
    default: break;
  }
  return mutated != 0 ? mutated : LLVMFuzzerMutate(data, size, max_size);
}
