// A structure-aware addition to libFuzzer's mutations, for harnesses whose
// bugs live in large repetitive inputs (long prefixes, many bracket groups,
// long zero padding): one time in eight it copies a short region of the input
// (1 to 16 bytes) in place 64 to 8192 times, adding at most 16 KiB (larger
// inputs slow every later execution); otherwise libFuzzer mutates as usual.
// Byte-level mutation grows an input a few bytes at a time, and one more copy
// adds no new coverage for it to keep, so it never reaches, say, a host name
// with a 4000-byte prefix; one repetition of "x" does. Include it in exactly
// one translation unit of a harness.
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
  if (size == 0 || random() % 8 != 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::size_t length = std::min<std::size_t>(size, 1 + random() % 16);
  const std::size_t start = random() % (size - length + 1);
  const std::size_t wanted = std::size_t{64} << (random() % 8);                     // 64 .. 8192 copies
  const std::size_t room = std::min<std::size_t>(max_size - size, 16384) / length;  // extra copies that fit
  const std::size_t extra = std::min(wanted - 1, room);
  if (extra == 0) return LLVMFuzzerMutate(data, size, max_size);
  const std::size_t grown = extra * length;
  std::memmove(data + start + length + grown, data + start + length, size - start - length);
  for (std::size_t copy = 1; copy <= extra; ++copy) std::memcpy(data + start + copy * length, data + start, length);
  return size + grown;
}
