// Typed access to a checkpoint's HDF5 file, without LibTorch: arrays are raw
// bytes with an element type and a shape. Arrays become chunked datasets with
// HDF5's Fletcher32 filter (so every read verifies a checksum) at paths such
// as "optimizer/exp_avg/blocks.0.attn.qkv.weight"; scalars and strings become
// attributes of the root group. Everything stays readable by h5ls/h5dump.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/element_type.h"
#include "ckpt_file/manifest.h"
#include "handles/hdf5.h"

namespace hpctrain::ckpt_file {

// An array to write: `data` holds the product of `shape` elements, contiguous
// (an empty shape is one element).
struct ArrayView {
  std::string name;
  ElementType type = ElementType::kFloat32;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
};

// A dataset as stored.
struct ArrayInfo {
  ElementType type = ElementType::kFloat32;
  std::vector<std::int64_t> shape;
  std::size_t elements = 0;
  std::size_t bytes = 0;
};

class Hdf5Writer {
 public:
  // Creates `path`, which must not exist: a file or link there is an error.
  explicit Hdf5Writer(const std::filesystem::path& path);

  // One dataset each; intermediate groups are created.
  void arrays(const std::vector<ArrayView>& named);
  void attribute(const std::string& name, std::int64_t value);
  void attribute(const std::string& name, double value);
  void attribute(const std::string& name, const std::string& value);
  // Writes the manifest of everything above (manifest.h) and flushes HDF5's
  // buffers to the file (the caller fsyncs).
  void finish();

 private:
  void write_string(const std::string& name, const std::string& value);

  std::string name_;
  handles::H5Id file_;
  Manifest manifest_;
};

enum class AttributeKind { kInt, kReal, kString };

// A checkpoint from anywhere: hdf5_reader.cpp says what is checked before and
// while reading. Every error is a CheckpointError naming the file and the
// dataset or attribute.
class Hdf5Reader {
 public:
  explicit Hdf5Reader(const std::filesystem::path& path);

  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] bool has(const std::string& dataset) const;
  [[nodiscard]] bool has_group(const std::string& group) const;
  // Every dataset in the file, by path, sorted.
  [[nodiscard]] const std::vector<std::string>& datasets() const { return datasets_; }
  // The datasets directly inside `group` (names without the group prefix).
  [[nodiscard]] std::vector<std::string> members(const std::string& group) const;
  [[nodiscard]] ArrayInfo info(const std::string& dataset) const;
  // Reads and checksums a dataset into `out` (info(dataset).bytes of room).
  void read(const std::string& dataset, void* out, std::size_t bytes) const;
  [[nodiscard]] std::vector<unsigned char> read(const std::string& dataset) const;

  // How many root attributes there are; each is read by name (a listing of
  // them is what libhdf5 1.10.8 crashes on, see attribute_count()).
  [[nodiscard]] std::size_t attribute_count() const;
  [[nodiscard]] bool has_attribute(const std::string& name) const;
  [[nodiscard]] AttributeKind attribute_kind(const std::string& name) const;
  [[nodiscard]] std::int64_t int_attribute(const std::string& name) const;
  [[nodiscard]] double real_attribute(const std::string& name) const;
  [[nodiscard]] std::string string_attribute(const std::string& name) const;

 private:
  std::string name_;
  std::uintmax_t file_bytes_ = 0;
  handles::H5Id file_;
  std::vector<std::string> datasets_;
  std::vector<std::string> groups_;
};

}  // namespace hpctrain::ckpt_file
