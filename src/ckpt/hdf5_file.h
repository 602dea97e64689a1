// Typed access to a checkpoint's HDF5 file. Tensors become chunked datasets
// with HDF5's Fletcher32 filter (so every read verifies a checksum) at paths
// such as "optimizer/exp_avg/blocks.0.attn.qkv.weight"; scalars and strings
// become attributes of the root group. Everything stays readable by h5ls/h5dump.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "handles/hdf5.h"

namespace hpctrain::ckpt {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Hdf5Writer {
 public:
  // Creates (truncates) `path`.
  explicit Hdf5Writer(const std::filesystem::path& path);

  // Named CPU tensors of float32, float64, int64 or uint8, one dataset each;
  // intermediate groups are created.
  void tensors(const std::vector<std::pair<std::string, at::Tensor>>& named);
  void attribute(const std::string& name, std::int64_t value);
  void attribute(const std::string& name, double value);
  void attribute(const std::string& name, const std::string& value);
  // Flushes HDF5's buffers to the file (the caller fsyncs).
  void flush();

 private:
  std::string name_;
  handles::H5Id file_;
};

class Hdf5Reader {
 public:
  // Throws CheckpointError naming `path` when it is absent or not HDF5 (truncated).
  explicit Hdf5Reader(const std::filesystem::path& path);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] bool has(const std::string& dataset) const;
  // Every dataset in the file, by path, in HDF5's name order.
  [[nodiscard]] std::vector<std::string> datasets() const;
  // The datasets directly inside `group` (names without the group prefix).
  [[nodiscard]] std::vector<std::string> members(const std::string& group) const;
  [[nodiscard]] std::vector<std::int64_t> shape(const std::string& dataset) const;
  [[nodiscard]] std::string dtype(const std::string& dataset) const;  // "float32", "int64", ...
  // Reads and checksums a dataset; throws CheckpointError naming the file and
  // the dataset when Fletcher32 fails or it cannot be read.
  [[nodiscard]] at::Tensor tensor(const std::string& dataset) const;

  [[nodiscard]] bool has_attribute(const std::string& name) const;
  [[nodiscard]] std::int64_t int_attribute(const std::string& name) const;
  [[nodiscard]] double real_attribute(const std::string& name) const;
  [[nodiscard]] std::string string_attribute(const std::string& name) const;

 private:
  std::string name_;
  handles::H5Id file_;
};

}  // namespace hpctrain::ckpt
