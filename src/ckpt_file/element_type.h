// The element types of a checkpoint's arrays.
#pragma once

#include <cstddef>

namespace hpctrain::ckpt_file {

// Stored little-endian: IEEE floats, two's complement integers.
enum class ElementType { kFloat32, kFloat64, kInt64, kUInt8 };
std::size_t element_size(ElementType type);
const char* element_name(ElementType type);  // "float32", "float64", "int64", "uint8"

}  // namespace hpctrain::ckpt_file
