// Element types and reductions the communicators support, and the fp16/bf16
// conversions the MPI backend needs to reduce them on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace hpctrain::comm {

enum class DType { kFloat32, kBFloat16, kFloat16, kInt64, kUInt8 };
enum class ReduceOp { kSum, kAverage };
enum class Device { kCpu, kCuda };

std::size_t element_size(DType dtype);
const char* to_string(DType dtype);
const char* to_string(ReduceOp op);
const char* to_string(Device device);

// Divides `count` elements at `data` by `divisor` in place. Integers truncate
// towards zero; low-precision floats round to nearest even.
void divide_in_place(void* data, std::size_t count, DType dtype, int divisor);

inline float bf16_to_float(std::uint16_t v) {
  const std::uint32_t bits = static_cast<std::uint32_t>(v) << 16;
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof f);
  if ((bits & 0x7FFFFFFFU) > 0x7F800000U) return static_cast<std::uint16_t>((bits >> 16) | 0x0040U);  // quiet NaN
  bits += 0x7FFFU + ((bits >> 16) & 1U);  // round to nearest, ties to even
  return static_cast<std::uint16_t>(bits >> 16);
}

float half_to_float(std::uint16_t h);
std::uint16_t float_to_half(float f);

}  // namespace hpctrain::comm
