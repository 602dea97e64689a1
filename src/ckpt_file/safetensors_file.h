// A safetensors file from elsewhere (a Hugging Face model's weights), read
// without LibTorch: an 8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the data. Everything
// the header claims is checked against the file before a tensor is read: the
// header's size and nesting, each entry's fields, the dtype (F32, F16, BF16),
// the shape's element count against its byte range, and the ranges against
// the data (inside it, no two overlapping, no byte belonging to none). Every
// refusal is one line naming the file and, where there is one, the tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/input_file.h"

namespace hpctrain::ckpt_file {

enum class TensorDtype { kF32, kF16, kBF16 };
const char* dtype_name(TensorDtype dtype);

struct SafetensorsEntry {
  std::string name;
  TensorDtype dtype = TensorDtype::kF32;
  std::vector<std::int64_t> shape;
  std::uint64_t begin = 0;  // byte range in the file (not in the data section)
  std::uint64_t end = 0;
  [[nodiscard]] std::uint64_t elements() const;
};

class SafetensorsFile {
 public:
  // The header may take at most this many bytes (Hugging Face's own limit).
  static constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{100} << 20;

  explicit SafetensorsFile(const std::filesystem::path& path);

  [[nodiscard]] const std::string& name() const { return file_.name(); }
  // In the order of their data.
  [[nodiscard]] const std::vector<SafetensorsEntry>& entries() const { return entries_; }
  [[nodiscard]] const SafetensorsEntry* find(const std::string& tensor) const;
  [[nodiscard]] const std::map<std::string, std::string>& metadata() const { return metadata_; }
  // The tensor's values as float32 (F16 and BF16 widened exactly), row-major.
  [[nodiscard]] std::vector<float> read_float32(const SafetensorsEntry& entry) const;

 private:
  support::InputFile file_;
  std::vector<SafetensorsEntry> entries_;
  std::map<std::string, std::size_t> by_name_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace hpctrain::ckpt_file
