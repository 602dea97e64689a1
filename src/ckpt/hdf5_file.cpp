#include "ckpt/hdf5_file.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <future>
#include <memory>
#include <vector>

#include "ckpt/fletcher32.h"

namespace hpctrain::ckpt {
namespace {

using handles::check_h5;
using handles::check_h5_status;
using handles::H5Id;

constexpr hsize_t kChunkBytes = hsize_t{4} << 20;
constexpr std::size_t kBatchBytes = std::size_t{4} << 20;

struct TypePair {
  hid_t file;    // how it is stored
  hid_t memory;  // how it is read and written here
};

TypePair h5_type(torch::ScalarType type, const std::string& what) {
  switch (type) {
    case torch::kFloat32: return {H5T_IEEE_F32LE, H5T_NATIVE_FLOAT};
    case torch::kFloat64: return {H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE};
    case torch::kInt64: return {H5T_STD_I64LE, H5T_NATIVE_INT64};
    case torch::kUInt8: return {H5T_STD_U8LE, H5T_NATIVE_UINT8};
    default: throw CheckpointError(fmt::format("{}: cannot store {} tensors", what, c10::toString(type)));
  }
}

torch::ScalarType torch_type(hid_t type, const std::string& what) {
  const std::size_t size = H5Tget_size(type);
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      if (size == 4) return torch::kFloat32;
      if (size == 8) return torch::kFloat64;
      break;
    case H5T_INTEGER:
      if (size == 8 && H5Tget_sign(type) == H5T_SGN_2) return torch::kInt64;
      if (size == 1 && H5Tget_sign(type) == H5T_SGN_NONE) return torch::kUInt8;
      break;
    default: break;
  }
  throw CheckpointError(fmt::format("{}: an element type hpctrain does not write", what));
}

struct StagedChunk {
  std::size_t dataset = 0;  // index into the datasets being written
  const unsigned char* data = nullptr;
  std::size_t used = 0;   // bytes of the tensor in this chunk
  std::size_t bytes = 0;  // of the whole chunk: edge chunks are zero-padded
  std::vector<hsize_t> offset;
  std::size_t at = 0;  // where it is staged in its batch's buffer, its checksum after it
};

// Creates DATASET for T (a contiguous tensor) in FILE, and appends its chunks.
H5Id create_dataset(hid_t file, const std::string& what, const std::string& dataset, const at::Tensor& t,
                    std::size_t index, std::vector<StagedChunk>& chunks) {
  const TypePair type = h5_type(t.scalar_type(), what);
  std::vector<hsize_t> dims(t.sizes().begin(), t.sizes().end());
  if (dims.empty()) dims.push_back(1);
  // Fletcher32 needs chunking: chunks of whole rows, about 4 MiB each (at least one element).
  std::vector<hsize_t> chunk = dims;
  const auto elements = static_cast<hsize_t>(std::max<std::int64_t>(1, t.numel()));
  const hsize_t row_bytes = std::max<hsize_t>(1, elements / std::max<hsize_t>(1, dims[0])) * t.element_size();
  chunk[0] = std::clamp<hsize_t>(kChunkBytes / row_bytes, 1, std::max<hsize_t>(1, dims[0]));
  for (auto& c : chunk) c = std::max<hsize_t>(1, c);
  const H5Id space(check_h5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), what));
  const H5Id create(check_h5(H5Pcreate(H5P_DATASET_CREATE), what));
  if (t.numel() > 0) {
    check_h5_status(H5Pset_chunk(create.get(), static_cast<int>(chunk.size()), chunk.data()), what);
    check_h5_status(H5Pset_fletcher32(create.get()), what);
  }
  const H5Id links(check_h5(H5Pcreate(H5P_LINK_CREATE), what));
  check_h5_status(H5Pset_create_intermediate_group(links.get(), 1), what);
  H5Id set(check_h5(H5Dcreate2(file, dataset.c_str(), type.file, space.get(), links.get(), create.get(), H5P_DEFAULT),
                    what));
  if (t.numel() == 0) return set;
  const auto* data = static_cast<const unsigned char*>(t.data_ptr());
  const std::size_t chunk_bytes = chunk[0] * row_bytes;
  for (hsize_t row = 0; row < dims[0]; row += chunk[0]) {
    StagedChunk c;
    c.dataset = index;
    c.data = data + row * row_bytes;
    c.used = std::min<hsize_t>(chunk[0], dims[0] - row) * row_bytes;
    c.bytes = chunk_bytes;
    c.offset.assign(dims.size(), 0);
    c.offset[0] = row;
    chunks.push_back(std::move(c));
  }
  return set;
}

// Chunks are staged in batches of about kBatchBytes; returns each batch's first
// chunk and, last, chunks.size(). Sets every chunk's place in its batch's buffer.
std::vector<std::size_t> batch_starts(std::vector<StagedChunk>& chunks) {
  std::vector<std::size_t> starts{0};
  std::size_t at = 0;
  for (std::size_t c = 0; c < chunks.size(); ++c) {
    if (at > 0 && at + chunks[c].bytes + 4 > kBatchBytes) {
      starts.push_back(c);
      at = 0;
    }
    chunks[c].at = at;
    at += chunks[c].bytes + 4;
  }
  if (!chunks.empty()) starts.push_back(chunks.size());
  return starts;
}

H5Id open_attribute(hid_t file, const std::string& name, const std::string& file_name) {
  if (H5Aexists(file, name.c_str()) <= 0) {
    throw CheckpointError(fmt::format("{}: attribute {} is missing", file_name, name));
  }
  return H5Id(check_h5(H5Aopen(file, name.c_str(), H5P_DEFAULT), fmt::format("{}: attribute {}", file_name, name)));
}

}  // namespace

Hdf5Writer::Hdf5Writer(const std::filesystem::path& path) : name_(path.string()) {
  handles::quiet_hdf5_errors();
  file_ = H5Id(check_h5(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), name_));
}

void Hdf5Writer::tensors(const std::vector<std::pair<std::string, at::Tensor>>& named) {
  // Every dataset is created first; then the chunks go to the file directly
  // with our own Fletcher32 (fletcher32.h), the same bytes HDF5's filter would
  // store, several times faster. Copying and checksumming (staging) the next
  // batch of chunks runs on a helper thread while this one writes the last.
  std::vector<H5Id> datasets;
  std::vector<torch::Tensor> contiguous;
  std::vector<StagedChunk> chunks;
  for (const auto& [name, value] : named) {
    contiguous.push_back(value.contiguous());
    datasets.push_back(create_dataset(file_.get(), fmt::format("{}: {}", name_, name), name, contiguous.back(),
                                      datasets.size(), chunks));
  }
  if (chunks.empty()) return;
  const std::vector<std::size_t> batches = batch_starts(chunks);
  // Uninitialised: zero-filling them first would cost as much as a batch's copy.
  std::size_t largest = 0;
  for (std::size_t b = 0; b + 1 < batches.size(); ++b) {
    const StagedChunk& last = chunks[batches[b + 1] - 1];
    largest = std::max(largest, last.at + last.bytes + 4);
  }
  const std::array<std::unique_ptr<unsigned char[]>, 2> buffers{
      // outlive `staged` below
      std::unique_ptr<unsigned char[]>(new unsigned char[largest]),
      std::unique_ptr<unsigned char[]>(new unsigned char[largest])};
  auto stage = [&](std::size_t batch) {
    const std::size_t end = batches[batch + 1];
    for (std::size_t c = batches[batch]; c < end; ++c) {
      const StagedChunk& chunk = chunks[c];
      unsigned char* out = buffers[batch % 2].get() + chunk.at;
      std::memcpy(out, chunk.data, chunk.used);
      std::memset(out + chunk.used, 0, chunk.bytes - chunk.used);  // HDF5 keeps edge chunks whole
      const std::uint32_t sum = fletcher32(out, chunk.bytes);
      for (std::size_t k = 0; k < 4; ++k) out[chunk.bytes + k] = static_cast<unsigned char>(sum >> (8 * k));
    }
  };
  std::future<void> staged = std::async(std::launch::async, stage, 0);
  for (std::size_t batch = 0; batch + 1 < batches.size(); ++batch) {
    staged.get();
    if (batch + 2 < batches.size()) staged = std::async(std::launch::async, stage, batch + 1);
    for (std::size_t c = batches[batch]; c < batches[batch + 1]; ++c) {
      const StagedChunk& chunk = chunks[c];
      check_h5_status(H5Dwrite_chunk(datasets[chunk.dataset].get(), H5P_DEFAULT, 0, chunk.offset.data(),
                                     chunk.bytes + 4, buffers[batch % 2].get() + chunk.at),
                      fmt::format("{}: writing {}", name_, named[chunk.dataset].first));
    }
  }
}

void Hdf5Writer::attribute(const std::string& name, std::int64_t value) {
  const H5Id space(check_h5(H5Screate(H5S_SCALAR), name));
  const H5Id a(check_h5(H5Acreate2(file_.get(), name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        fmt::format("{}: attribute {}", name_, name)));
  check_h5_status(H5Awrite(a.get(), H5T_NATIVE_INT64, &value), name);
}

void Hdf5Writer::attribute(const std::string& name, double value) {
  const H5Id space(check_h5(H5Screate(H5S_SCALAR), name));
  const H5Id a(check_h5(H5Acreate2(file_.get(), name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        fmt::format("{}: attribute {}", name_, name)));
  check_h5_status(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value), name);
}

void Hdf5Writer::attribute(const std::string& name, const std::string& value) {
  const H5Id type(check_h5(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check_h5_status(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), "H5Tset_size");
  const H5Id space(check_h5(H5Screate(H5S_SCALAR), name));
  const H5Id a(check_h5(H5Acreate2(file_.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        fmt::format("{}: attribute {}", name_, name)));
  check_h5_status(H5Awrite(a.get(), type.get(), value.empty() ? "" : value.data()), name);
}

void Hdf5Writer::flush() { check_h5_status(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), name_ + ": H5Fflush"); }

Hdf5Reader::Hdf5Reader(const std::filesystem::path& path) : name_(path.string()) {
  handles::quiet_hdf5_errors();
  if (!std::filesystem::is_regular_file(path)) throw CheckpointError(fmt::format("{}: no such checkpoint", name_));
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw CheckpointError(fmt::format("{}: not a readable HDF5 file (truncated or corrupt?)", name_));
  file_ = H5Id(file);
}

bool Hdf5Reader::has(const std::string& dataset) const {
  // H5Lexists fails on a missing intermediate group, so walk the path.
  std::size_t end = 0;
  while ((end = dataset.find('/', end + 1)) != std::string::npos) {
    if (H5Lexists(file_.get(), dataset.substr(0, end).c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return H5Lexists(file_.get(), dataset.c_str(), H5P_DEFAULT) > 0;
}

std::vector<std::string> Hdf5Reader::datasets() const {
  std::vector<std::string> found;
  // Links rather than objects: H5Lvisit has one signature across HDF5 1.10 to 1.14.
  auto visit = [](hid_t group, const char* name, const H5L_info_t*, void* out) -> herr_t {
    const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
    if (object < 0) return -1;
    const bool dataset = H5Iget_type(object) == H5I_DATASET;
    H5Oclose(object);
    if (dataset) static_cast<std::vector<std::string>*>(out)->emplace_back(name);
    return 0;
  };
  check_h5_status(H5Lvisit(file_.get(), H5_INDEX_NAME, H5_ITER_INC, visit, &found), name_ + ": listing datasets");
  return found;
}

std::vector<std::string> Hdf5Reader::members(const std::string& group) const {
  std::vector<std::string> names;
  if (!has(group)) return names;
  const std::string prefix = group + "/";
  for (auto& d : datasets()) {
    if (d.rfind(prefix, 0) == 0 && d.find('/', prefix.size()) == std::string::npos) {
      names.push_back(d.substr(prefix.size()));
    }
  }
  return names;
}

std::vector<std::int64_t> Hdf5Reader::shape(const std::string& dataset) const {
  const std::string what = fmt::format("{}: {}", name_, dataset);
  if (!has(dataset)) throw CheckpointError(what + " is missing");
  const H5Id set(check_h5(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), what));
  const H5Id space(check_h5(H5Dget_space(set.get()), what));
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(space.get()))));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return {dims.begin(), dims.end()};
}

std::string Hdf5Reader::dtype(const std::string& dataset) const {
  const std::string what = fmt::format("{}: {}", name_, dataset);
  const H5Id set(check_h5(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), what));
  const H5Id type(check_h5(H5Dget_type(set.get()), what));
  switch (torch_type(type.get(), what)) {
    case torch::kFloat32: return "float32";
    case torch::kFloat64: return "float64";
    case torch::kInt64: return "int64";
    default: return "uint8";
  }
}

at::Tensor Hdf5Reader::tensor(const std::string& dataset) const {
  const std::string what = fmt::format("{}: {}", name_, dataset);
  const std::vector<std::int64_t> dims = shape(dataset);
  const H5Id set(check_h5(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), what));
  const H5Id type(check_h5(H5Dget_type(set.get()), what));
  const torch::ScalarType scalar = torch_type(type.get(), what);
  torch::Tensor out = torch::empty(dims, torch::TensorOptions().dtype(scalar));
  if (out.numel() > 0 &&
      H5Dread(set.get(), h5_type(scalar, what).memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data_ptr()) < 0) {
    throw CheckpointError(fmt::format("{} fails its checksum or cannot be read", what));
  }
  return out;
}

bool Hdf5Reader::has_attribute(const std::string& name) const { return H5Aexists(file_.get(), name.c_str()) > 0; }

std::int64_t Hdf5Reader::int_attribute(const std::string& name) const {
  const H5Id a = open_attribute(file_.get(), name, name_);
  std::int64_t value = 0;
  check_h5_status(H5Aread(a.get(), H5T_NATIVE_INT64, &value), fmt::format("{}: attribute {}", name_, name));
  return value;
}

double Hdf5Reader::real_attribute(const std::string& name) const {
  const H5Id a = open_attribute(file_.get(), name, name_);
  double value = 0;
  check_h5_status(H5Aread(a.get(), H5T_NATIVE_DOUBLE, &value), fmt::format("{}: attribute {}", name_, name));
  return value;
}

std::string Hdf5Reader::string_attribute(const std::string& name) const {
  const H5Id a = open_attribute(file_.get(), name, name_);
  const H5Id type(check_h5(H5Aget_type(a.get()), name));
  if (H5Tget_class(type.get()) != H5T_STRING) {
    throw CheckpointError(fmt::format("{}: attribute {} is not a string", name_, name));
  }
  std::string value(H5Tget_size(type.get()), '\0');
  check_h5_status(H5Aread(a.get(), type.get(), value.data()), fmt::format("{}: attribute {}", name_, name));
  value.resize(std::strlen(value.c_str()));
  return value;
}

}  // namespace hpctrain::ckpt
