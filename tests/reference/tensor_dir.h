// The tensor interchange format shared with tests/reference/tensorio.py: a
// directory with manifest.json ({"tensors": {name: {dtype, shape, file}},
// "meta": {...}}) and one raw little-endian file per tensor.
#pragma once

#include <ATen/core/Tensor.h>

#include <filesystem>
#include <map>
#include <string>

namespace hpctrain::testing {

struct TensorDir {
  std::map<std::string, at::Tensor> tensors;
  std::string meta_json = "{}";
};

void write_tensor_dir(const std::filesystem::path& dir, const TensorDir& contents);
TensorDir read_tensor_dir(const std::filesystem::path& dir);

}  // namespace hpctrain::testing
