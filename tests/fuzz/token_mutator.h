// A structure-aware addition to libFuzzer's mutations, for harnesses whose
// bugs need one token of their input's syntax thousands of times over: tens
// of thousands of comment tags on one line, a key or an array nested
// thousands deep. One time in eight it inserts one of the harness's tokens
// 64 to 65,536 times at a random place, adding at most 512 KiB; otherwise
// libFuzzer mutates as usual. Byte-level mutation inserts a dictionary
// token once at a time, and one more copy adds no coverage for it to keep,
// so it never grows such an input; repeat_mutator.h repeats a region of the
// input instead, which rarely is exactly one whole token. The harness defines
// LLVMFuzzerCustomMutator and calls insert_repeated_token from it.
//
// The GCC-built replay driver never mutates: LLVMFuzzerMutate is declared weak
// so the harness links there without libFuzzer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <string_view>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size)
    __attribute__((weak));

namespace hpctrain::fuzz {

inline std::size_t insert_repeated_token(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed,
                                         std::span<const std::string_view> tokens) {
  std::minstd_rand random(seed);
  if (random() % 8 != 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::string_view token = tokens[random() % tokens.size()];
  const std::size_t wanted = std::size_t{64} << (random() % 11);  // 64 .. 65,536 copies
  const std::size_t room = std::min<std::size_t>(max_size - size, std::size_t{512} << 10) / token.size();
  const std::size_t copies = std::min(wanted, room);
  if (copies == 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::size_t at = random() % (size + 1);
  const std::size_t grown = copies * token.size();
  std::memmove(data + at + grown, data + at, size - at);
  for (std::size_t copy = 0; copy < copies; ++copy)
    std::memcpy(data + at + copy * token.size(), token.data(), token.size());
  return size + grown;
}

}  // namespace hpctrain::fuzz
