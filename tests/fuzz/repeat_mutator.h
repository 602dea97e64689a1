// A structure-aware addition to libFuzzer's mutations, for harnesses whose
// bugs live in large repetitive inputs (deep nesting, long runs of tags):
// besides libFuzzer's own mutations, one time in four it copies a short
// region of the input (1 to 16 bytes) many times in place, 2 to 8192 copies,
// within max_size. Byte-level mutation only grows an input a few bytes at a
// time, and one more level of nesting adds no new coverage for it to keep, so
// it never reaches, say, a TOML header of 5000 dotted keys; one repetition of
// ".a" does. Include it in exactly one translation unit of a harness.
//
// The GCC-built replay driver never mutates: LLVMFuzzerMutate is declared weak
// so the harness links there without libFuzzer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size)
    __attribute__((weak));

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::minstd_rand random(seed);
  if (size == 0 || random() % 4 != 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::size_t length = std::min<std::size_t>(size, 1 + random() % 16);
  const std::size_t start = random() % (size - length + 1);
  const std::size_t wanted = std::size_t{2} << (random() % 13);  // 2 .. 8192 copies
  const std::size_t room = (max_size - size) / length;           // extra copies that fit
  const std::size_t extra = std::min(wanted - 1, room);
  if (extra == 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::size_t grown = extra * length;
  std::memmove(data + start + length + grown, data + start + length, size - start - length);
  for (std::size_t copy = 1; copy <= extra; ++copy) std::memcpy(data + start + copy * length, data + start, length);
  return size + grown;
}
