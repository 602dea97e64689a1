#include "ckpt_file/hdf5_file.h"

#include "ckpt_file/hdf5_types.h"

namespace hpctrain::ckpt_file {

std::size_t element_size(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return 4;
    case ElementType::kFloat64:
    case ElementType::kInt64: return 8;
    case ElementType::kUInt8: return 1;
  }
  return 0;
}

const char* element_name(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "float32";
    case ElementType::kFloat64: return "float64";
    case ElementType::kInt64: return "int64";
    case ElementType::kUInt8: return "uint8";
  }
  return "?";
}

H5TypePair h5_type(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return {H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case ElementType::kFloat64: return {H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE};
    case ElementType::kInt64: return {H5T_STD_I64LE, H5T_NATIVE_INT64};
    case ElementType::kUInt8: return {H5T_STD_U8LE, H5T_NATIVE_UINT8};
  }
  return {H5T_STD_U8LE, H5T_NATIVE_UINT8};
}

std::optional<ElementType> stored_element_type(hid_t type) {
  for (const ElementType t : {ElementType::kFloat32, ElementType::kFloat64, ElementType::kInt64, ElementType::kUInt8}) {
    if (H5Tequal(type, h5_type(t).file) > 0) return t;
  }
  return std::nullopt;
}

}  // namespace hpctrain::ckpt_file
