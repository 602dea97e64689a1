#include "comm/dtype.h"

#include <cmath>

namespace hpctrain::comm {

std::size_t element_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
    case DType::kBFloat16:
    case DType::kFloat16: return 2;
    case DType::kInt64: return 8;
    case DType::kUInt8: return 1;
  }
  return 0;
}

const char* to_string(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "fp32";
    case DType::kBFloat16: return "bf16";
    case DType::kFloat16: return "fp16";
    case DType::kInt64: return "int64";
    case DType::kUInt8: return "uint8";
  }
  return "?";
}

const char* to_string(ReduceOp op) { return op == ReduceOp::kSum ? "sum" : "avg"; }
const char* to_string(Device device) { return device == Device::kCpu ? "cpu" : "cuda"; }

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000U) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1FU;
  const std::uint32_t mantissa = h & 0x3FFU;
  if (exponent == 0) {
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  std::uint32_t bits = 0;
  if (exponent == 31) {
    bits = sign | 0x7F800000U | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112U) << 23) | (mantissa << 13);
  }
  float f = 0;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint16_t float_to_half(float f) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof f);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000U);
  bits &= 0x7FFFFFFFU;
  if (bits >= 0x7F800000U) return sign | (bits > 0x7F800000U ? 0x7E00U : 0x7C00U);  // NaN, inf
  if (bits >= 0x477FF000U) return sign | 0x7C00U;  // rounds past 65504: overflow to inf
  auto round_shift = [](std::uint32_t value, std::uint32_t shift) {
    const std::uint32_t rest = value & ((1U << shift) - 1U);
    const std::uint32_t half = 1U << (shift - 1U);
    std::uint32_t out = value >> shift;
    if (rest > half || (rest == half && (out & 1U) != 0)) ++out;
    return out;
  };
  if (bits < 0x38800000U) {  // below the smallest normal half: subnormal or zero
    if (bits < 0x33000000U) return sign;
    const std::uint32_t exponent = bits >> 23;
    const std::uint32_t mantissa = (bits & 0x7FFFFFU) | 0x800000U;
    return sign | static_cast<std::uint16_t>(round_shift(mantissa, 126U - exponent));
  }
  return sign | static_cast<std::uint16_t>(round_shift(bits - (112U << 23), 13U));
}

void divide_in_place(void* data, std::size_t count, DType dtype, int divisor) {
  if (divisor == 1) return;
  switch (dtype) {
    case DType::kFloat32: {
      auto* p = static_cast<float*>(data);
      const float d = static_cast<float>(divisor);
      for (std::size_t i = 0; i < count; ++i) p[i] /= d;
      break;
    }
    case DType::kBFloat16: {
      auto* p = static_cast<std::uint16_t*>(data);
      for (std::size_t i = 0; i < count; ++i) p[i] = float_to_bf16(bf16_to_float(p[i]) / static_cast<float>(divisor));
      break;
    }
    case DType::kFloat16: {
      auto* p = static_cast<std::uint16_t*>(data);
      for (std::size_t i = 0; i < count; ++i) p[i] = float_to_half(half_to_float(p[i]) / static_cast<float>(divisor));
      break;
    }
    case DType::kInt64: {
      auto* p = static_cast<std::int64_t*>(data);
      for (std::size_t i = 0; i < count; ++i) p[i] /= divisor;
      break;
    }
    case DType::kUInt8: {
      auto* p = static_cast<std::uint8_t*>(data);
      for (std::size_t i = 0; i < count; ++i) p[i] = static_cast<std::uint8_t>(p[i] / divisor);
      break;
    }
  }
}

}  // namespace hpctrain::comm
