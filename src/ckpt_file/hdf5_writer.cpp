#include "ckpt_file/hdf5_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <future>
#include <memory>
#include <vector>

#include "ckpt_file/fletcher32.h"
#include "ckpt_file/hdf5_types.h"
#include "ckpt_file/manifest.h"
#include "support/no_follow.h"

namespace hpctrain::ckpt_file {
namespace {

using handles::check_h5;
using handles::check_h5_status;
using handles::H5Id;

constexpr hsize_t kChunkBytes = hsize_t{4} << 20;
constexpr std::size_t kBatchBytes = std::size_t{4} << 20;

struct StagedChunk {
  std::size_t dataset = 0;  // index into the datasets being written
  const unsigned char* data = nullptr;
  std::size_t used = 0;   // bytes of the tensor in this chunk
  std::size_t bytes = 0;  // of the whole chunk: edge chunks are zero-padded
  std::vector<hsize_t> offset;
  std::size_t at = 0;  // where it is staged in its batch's buffer, its checksum after it
};

// Creates the dataset for A in FILE, and appends its chunks.
H5Id create_dataset(hid_t file, const std::string& what, const ArrayView& a, std::size_t index,
                    std::vector<StagedChunk>& chunks) {
  const H5TypePair type = h5_type(a.type);
  // A scalar is stored as one element. (Built in one go: growing the vector
  // here trips a false -Wfree-nonheap-object in GCC 12.)
  const std::vector<hsize_t> dims =
      a.shape.empty() ? std::vector<hsize_t>{1} : std::vector<hsize_t>(a.shape.begin(), a.shape.end());
  std::int64_t numel = 1;
  for (const hsize_t d : dims) numel *= static_cast<std::int64_t>(d);
  // Fletcher32 needs chunking: chunks of whole rows, about 4 MiB each (at least one element).
  std::vector<hsize_t> chunk = dims;
  const auto elements = static_cast<hsize_t>(std::max<std::int64_t>(1, numel));
  const hsize_t row_bytes = std::max<hsize_t>(1, elements / std::max<hsize_t>(1, dims[0])) * element_size(a.type);
  chunk[0] = std::clamp<hsize_t>(kChunkBytes / row_bytes, 1, std::max<hsize_t>(1, dims[0]));
  for (auto& c : chunk) c = std::max<hsize_t>(1, c);
  const H5Id space(check_h5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), what));
  const H5Id create(check_h5(H5Pcreate(H5P_DATASET_CREATE), what));
  if (numel > 0) {
    check_h5_status(H5Pset_chunk(create.get(), static_cast<int>(chunk.size()), chunk.data()), what);
    check_h5_status(H5Pset_fletcher32(create.get()), what);
  }
  const H5Id links(check_h5(H5Pcreate(H5P_LINK_CREATE), what));
  check_h5_status(H5Pset_create_intermediate_group(links.get(), 1), what);
  H5Id set(
      check_h5(H5Dcreate2(file, a.name.c_str(), type.file, space.get(), links.get(), create.get(), H5P_DEFAULT), what));
  if (numel == 0) return set;
  const auto* data = static_cast<const unsigned char*>(a.data);
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

}  // namespace

Hdf5Writer::Hdf5Writer(const std::filesystem::path& path) : name_(path.string()) {
  handles::quiet_hdf5_errors();
  // HDF5's 1.8 file format: in the original one an attribute holds at most
  // 64 KiB, and the manifest of a DDAP checkpoint (replicas and their moments,
  // hundreds of datasets) is larger. Any HDF5 from 1.8 (2008) on reads it.
  const H5Id access(check_h5(H5Pcreate(H5P_FILE_ACCESS), name_));
  check_h5_status(H5Pset_libver_bounds(access.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), name_ + ": file format 1.8");
  // Nothing may stand at the name: a file or link planted there is named
  // (H5Fcreate would only say "HDF5 error"), and H5F_ACC_EXCL (O_CREAT |
  // O_EXCL) then refuses anything that appears meanwhile, a link included,
  // instead of truncating it.
  if (const auto there = support::file_kind_at(path); there != support::FileKind::kNothing) {
    throw CheckpointError(
        fmt::format("{}: cannot create it: {} stands there (hpctrain creates a new file and never "
                    "writes through a link)",
                    name_, support::describe(there)));
  }
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, access.get());
  if (file < 0 && support::file_kind_at(path) == support::FileKind::kRegular) {
    // libhdf5 created the file and then failed (file locking on a file system
    // without it, for one): the file is ours, and empty.
    std::error_code ec;
    std::filesystem::remove(path, ec);
  }
  file_ = H5Id(check_h5(file, name_));
}

void Hdf5Writer::arrays(const std::vector<ArrayView>& named) {
  // Every dataset is created first; then the chunks go to the file directly
  // with our own Fletcher32 (fletcher32.h), the same bytes HDF5's filter would
  // store, several times faster. Copying and checksumming (staging) the next
  // batch of chunks runs on a helper thread while this one writes the last.
  // The staging also takes each dataset's SHA-256 for the manifest, chunk by
  // chunk in order, while the bytes are in cache.
  std::vector<H5Id> datasets;
  std::vector<StagedChunk> chunks;
  std::vector<std::unique_ptr<support::Sha256>> digests;
  for (const ArrayView& a : named) {
    datasets.push_back(create_dataset(file_.get(), fmt::format("{}: {}", name_, a.name), a, datasets.size(), chunks));
    digests.push_back(std::make_unique<support::Sha256>());
  }
  auto record = [&] {
    for (std::size_t i = 0; i < named.size(); ++i) {
      manifest_.dataset(named[i].name, named[i].type,
                        named[i].shape.empty() ? std::vector<std::int64_t>{1} : named[i].shape, digests[i]->finish());
    }
  };
  if (chunks.empty()) {
    record();
    return;
  }
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
      digests[chunk.dataset]->update(std::string_view(reinterpret_cast<const char*>(out), chunk.used));
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
                      fmt::format("{}: writing {}", name_, named[chunk.dataset].name));
    }
  }
  record();
}

void Hdf5Writer::attribute(const std::string& name, std::int64_t value) {
  const H5Id space(check_h5(H5Screate(H5S_SCALAR), name));
  const H5Id a(check_h5(H5Acreate2(file_.get(), name.c_str(), H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        fmt::format("{}: attribute {}", name_, name)));
  check_h5_status(H5Awrite(a.get(), H5T_NATIVE_INT64, &value), name);
  manifest_.attribute(name, value);
}

void Hdf5Writer::attribute(const std::string& name, double value) {
  const H5Id space(check_h5(H5Screate(H5S_SCALAR), name));
  const H5Id a(check_h5(H5Acreate2(file_.get(), name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        fmt::format("{}: attribute {}", name_, name)));
  check_h5_status(H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value), name);
  manifest_.attribute(name, value);
}

void Hdf5Writer::attribute(const std::string& name, const std::string& value) {
  write_string(name, value);
  manifest_.attribute(name, value);
}

void Hdf5Writer::write_string(const std::string& name, const std::string& value) {
  // A fixed-length HDF5 string ends at its first NUL when read back.
  if (value.find('\0') != std::string::npos) {
    throw CheckpointError(fmt::format("{}: attribute {} would hold a NUL byte", name_, name));
  }
  const H5Id type(check_h5(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check_h5_status(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), "H5Tset_size");
  const H5Id space(check_h5(H5Screate(H5S_SCALAR), name));
  const H5Id a(check_h5(H5Acreate2(file_.get(), name.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                        fmt::format("{}: attribute {}", name_, name)));
  check_h5_status(H5Awrite(a.get(), type.get(), value.empty() ? "" : value.data()), name);
}

void Hdf5Writer::finish() {
  write_string(kManifestAttribute, manifest_.text());
  check_h5_status(H5Fflush(file_.get(), H5F_SCOPE_GLOBAL), name_ + ": H5Fflush");
}

}  // namespace hpctrain::ckpt_file
