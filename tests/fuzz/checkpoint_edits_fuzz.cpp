// Fuzz harness: the checkpoint reader on real checkpoints edited through
// HDF5's own API. The byte-level harness (checkpoint_fuzz.cpp) flips bytes of
// a file, and libhdf5 refuses most such files before our checks run (a size
// that no longer matches, a broken B-tree); whoever crafts a checkpoint on
// purpose uses h5py instead. Here the input is a program of edits applied to
// a copy of a real checkpoint (the first byte picks
// tests/fuzz/corpus/checkpoint/seed-ddp-mlp.h5, format 3, or
// seed-format2-ddp-mlp.h5, format 2, which the reader still accepts), each
// edit a few bytes:
//   0 attribute: replace a root attribute (a name hpctrain reads, or any)
//     with another class (integers, floats of either byte order, fixed or
//     variable-length strings), a scalar or an array of up to 3 dimensions;
//   1 remove a root attribute;
//   2 dataset: replace one with another element type, shape (up to 8
//     dimensions, sizes the file cannot hold included), layout (contiguous,
//     chunked, compact), filters (Fletcher32, deflate, shuffle) and values;
//   3 remove a dataset;
//   4 a chain of nested groups, up to 4096 deep;
//   5 a soft, external or hard link to a dataset or group;
//   6 a named datatype;
// then verifies the file and reads what a restore reads (checkpoint_reads.h).
// An edit HDF5 refuses is skipped.
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "checkpoint_reads.h"

namespace {

// The input, read a field at a time; past its end every field is 0.
class Program {
 public:
  Program(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  [[nodiscard]] bool done() const { return at_ >= size_; }
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint64_t number(int bytes) {
    std::uint64_t n = 0;
    for (int i = 0; i < bytes; ++i) n = (n << 8) | byte();
    return n;
  }
  std::string text(std::size_t most) {
    const std::size_t n = std::min<std::size_t>(byte() % (most + 1), size_ - std::min(at_, size_));
    std::string s(reinterpret_cast<const char*>(data_ + at_), n);
    at_ += n;
    return s;
  }
  // `count` bytes of values: the input's, repeated.
  std::vector<unsigned char> values(std::size_t count) {
    std::vector<unsigned char> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = size_ > 0 ? data_[(at_ + i) % size_] : 0;
    return out;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

// The attribute names hpctrain reads (and a few it does not).
constexpr std::array<const char*, 22> kAttributes = {"format_version",
                                                     "step",
                                                     "world_size",
                                                     "reducer",
                                                     "config",
                                                     "tokenizer_sha256",
                                                     "git_commit",
                                                     "versions",
                                                     "manifest",
                                                     "epoch",
                                                     "sampler_step",
                                                     "log_window_steps",
                                                     "log_window_loss",
                                                     "lr",
                                                     "ddap_merges",
                                                     "ddap_last_step",
                                                     "ddap_last_merge_applied_for",
                                                     "ddap_started_at",
                                                     "best_step",
                                                     "best_eval_loss",
                                                     "extra",
                                                     ""};

struct Seed {
  std::string bytes;
  std::vector<std::string> datasets;  // every dataset of the seed, by path
  std::vector<std::string> groups;
};

// What H5Ovisit hands its callback: H5O_info_t on HDF5 1.10 (H5Ovisit2),
// H5O_info2_t from 1.12 (H5Ovisit3; H5Ovisit2 there takes the 1.10 struct
// under another name).
#if H5_VERSION_GE(1, 12, 0)
using ObjectInfo = H5O_info2_t;
#else
using ObjectInfo = H5O_info_t;
#endif

herr_t collect(hid_t /*group*/, const char* name, const ObjectInfo* info, void* seed) {
  auto& s = *static_cast<Seed*>(seed);
  if (info->type == H5O_TYPE_DATASET) s.datasets.emplace_back(name);
  if (info->type == H5O_TYPE_GROUP && std::string(name) != ".") s.groups.emplace_back(name);
  return 0;
}

Seed load_seed(const char* name) {
  Seed s;
  const std::filesystem::path path = std::filesystem::path(HPCTRAIN_CORPUS_DIR) / "checkpoint" / name;
  std::ifstream in(path, std::ios::binary);
  s.bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file >= 0) {
#if H5_VERSION_GE(1, 12, 0)
    H5Ovisit3(file, H5_INDEX_NAME, H5_ITER_INC, collect, &s, H5O_INFO_BASIC);
#else
    H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, collect, &s, H5O_INFO_BASIC);
#endif
    H5Fclose(file);
  }
  if (s.datasets.empty() || s.groups.empty()) std::abort();  // the seed is missing: nothing to fuzz
  return s;
}

// The checkpoint being edited: format 3 (manifest) or format 2.
const Seed* current = nullptr;
const Seed& seed() { return *current; }
// An element type: the one byte picks it.
hid_t element_type(std::uint8_t pick, Program& p) {
  switch (pick % 12) {
    case 0: return H5Tcopy(H5T_IEEE_F32LE);
    case 1: return H5Tcopy(H5T_IEEE_F32BE);
    case 2: return H5Tcopy(H5T_IEEE_F64LE);
    case 3: return H5Tcopy(H5T_STD_I64LE);
    case 4: return H5Tcopy(H5T_STD_I64BE);
    case 5: return H5Tcopy(H5T_STD_U8LE);
    case 6: return H5Tcopy(H5T_STD_I32LE);
    case 7: return H5Tcopy(H5T_STD_U64LE);
    case 8: {
      const hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, 1 + p.number(2) % 70000);
      return t;
    }
    case 9: {
      const hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, H5T_VARIABLE);
      return t;
    }
    case 10: {
      const hid_t t = H5Tcreate(H5T_COMPOUND, 12);
      H5Tinsert(t, "a", 0, H5T_STD_I64LE);
      H5Tinsert(t, "b", 8, H5T_IEEE_F32LE);
      return t;
    }
    default: {
      const hid_t t = H5Tcopy(H5T_IEEE_F32LE);
      H5Tset_precision(t, 24);  // a float layout of another width
      return t;
    }
  }
}

// A dataspace: scalar, or `rank` dimensions of the sizes the input gives.
hid_t dataspace(Program& p, int most_rank, bool large, std::uint64_t& elements) {
  const int rank = p.byte() % (most_rank + 1);
  elements = 1;
  if (rank == 0) return H5Screate(H5S_SCALAR);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  for (auto& d : dims) {
    d = large && p.byte() % 4 == 0 ? p.number(5) : p.byte() % 40;
    elements = d == 0 || elements > (std::uint64_t{1} << 40) / d ? (d == 0 ? 0 : std::uint64_t{1} << 41) : elements * d;
  }
  return H5Screate_simple(rank, dims.data(), nullptr);
}

// Writes the input's bytes as the values (strings included: fixed ones are
// bytes, variable-length ones pointers to a few texts).
template <class Write>
void write_values(hid_t type, std::uint64_t elements, Program& p, Write write) {
  if (elements == 0 || elements > (1U << 20)) return;
  if (H5Tis_variable_str(type) > 0) {
    static const char* texts[] = {"", "ddp", "[model]\nkind = \"mlp\"\n", "\xff\xfe", "a\nb"};
    std::vector<const char*> strings(elements);
    for (auto& s : strings) s = texts[p.byte() % 5];
    write(strings.data());
    return;
  }
  // Fixed strings reach 70000 bytes an element: more than 4 MiB of values
  // (the seed checkpoint's datasets are smaller) only slows the harness.
  const std::uint64_t size = elements * H5Tget_size(type);
  if (size > (std::uint64_t{4} << 20)) return;
  const std::vector<unsigned char> bytes = p.values(size);
  write(bytes.data());
}

void edit_attribute(hid_t file, Program& p) {
  const std::uint8_t which = p.byte();
  const std::string name = which % 2 == 0 || which / 2 % kAttributes.size() == kAttributes.size() - 1
                               ? std::string(kAttributes[which / 2 % kAttributes.size()])
                               : p.text(12);
  if (name.empty()) return;
  if (H5Aexists(file, name.c_str()) > 0) H5Adelete(file, name.c_str());
  const hid_t type = element_type(p.byte(), p);
  std::uint64_t elements = 0;
  const hid_t space = dataspace(p, 3, false, elements);
  const hid_t attribute = H5Acreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
  if (attribute >= 0) {
    write_values(type, elements, p, [&](const void* values) { H5Awrite(attribute, type, values); });
    H5Aclose(attribute);
  }
  H5Sclose(space);
  H5Tclose(type);
}

void edit_dataset(hid_t file, Program& p) {
  const auto& paths = seed().datasets;
  const std::string path = paths[p.byte() % paths.size()];
  H5Ldelete(file, path.c_str(), H5P_DEFAULT);
  const hid_t type = element_type(p.byte(), p);
  std::uint64_t elements = 0;
  const hid_t space = dataspace(p, 8, true, elements);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  const std::uint8_t layout = p.byte();
  const int rank = H5Sget_simple_extent_ndims(space);
  // A million one-element chunks would spend the 5 s limit writing them in
  // this harness rather than reading them in hpctrain: beyond 4096 chunks the
  // dataset is created but not written.
  std::uint64_t chunks = 1;
  if (layout % 3 == 1 && rank > 0) {
    std::vector<hsize_t> chunk(static_cast<std::size_t>(rank));
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    for (std::size_t i = 0; i < chunk.size(); ++i) {
      chunk[i] = 1 + p.byte() % 16;
      const std::uint64_t along = std::min<std::uint64_t>((dims[i] + chunk[i] - 1) / chunk[i], 1U << 20);
      chunks = std::min<std::uint64_t>(chunks * along, 1U << 20);  // both <= 2^20: no overflow
    }
    H5Pset_chunk(create, rank, chunk.data());
    if (layout & 4U) H5Pset_fletcher32(create);
    if (layout & 8U) H5Pset_deflate(create, 1);
    if (layout & 16U) H5Pset_shuffle(create);
  } else if (layout % 3 == 2) {
    H5Pset_layout(create, H5D_COMPACT);
  }
  const hid_t set = H5Dcreate2(file, path.c_str(), type, space, H5P_DEFAULT, create, H5P_DEFAULT);
  if (set >= 0) {
    if ((layout & 32U) != 0 && chunks <= 4096) {
      write_values(type, elements, p,
                   [&](const void* values) { H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values); });
    }
    H5Dclose(set);
  }
  H5Pclose(create);
  H5Sclose(space);
  H5Tclose(type);
}

void nest_groups(hid_t file, Program& p) {
  const int depth = static_cast<int>(p.number(2) % 4097);
  hid_t at = H5Gcreate2(file, p.byte() % 2 == 0 ? "model/deep" : "deep", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  for (int d = 1; d < depth && at >= 0; ++d) {
    const hid_t next = H5Gcreate2(at, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(at);
    at = next;
  }
  if (at >= 0) H5Gclose(at);
}

void link(hid_t file, Program& p) {
  const auto& s = seed();
  const std::uint8_t kind = p.byte();
  const std::string target =
      kind & 8U ? s.groups[p.byte() % s.groups.size()] : s.datasets[p.byte() % s.datasets.size()];
  const std::string name = kind & 16U ? s.datasets[p.byte() % s.datasets.size()] : "model/" + p.text(8);
  if (kind & 16U) H5Ldelete(file, name.c_str(), H5P_DEFAULT);
  switch (kind % 3) {
    case 0: H5Lcreate_soft(("/" + target).c_str(), file, name.c_str(), H5P_DEFAULT, H5P_DEFAULT); break;
    case 1: H5Lcreate_external("/etc/passwd", target.c_str(), file, name.c_str(), H5P_DEFAULT, H5P_DEFAULT); break;
    default: H5Lcreate_hard(file, target.c_str(), file, name.c_str(), H5P_DEFAULT, H5P_DEFAULT); break;
  }
}

void named_type(hid_t file, Program& p) {
  const hid_t type = element_type(p.byte(), p);
  H5Tcommit2(file, p.byte() % 2 == 0 ? "model/type" : "type", type, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Tclose(type);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = hpctrain::fuzz::scratch_file("ckpt-edits");
  static const bool quiet = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;
  (void)quiet;
  static const Seed format3 = load_seed("seed-ddp-mlp.h5");
  static const Seed format2 = load_seed("seed-format2-ddp-mlp.h5");
  Program program(data, size);
  current = program.byte() % 2 == 0 ? &format3 : &format2;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << seed().bytes;
  }
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) return 0;
  for (int edits = 0; !program.done() && edits < 16; ++edits) {
    switch (program.byte() % 7) {
      case 0: edit_attribute(file, program); break;
      case 1: {
        const std::string name = kAttributes[program.byte() % kAttributes.size()];
        if (!name.empty()) H5Adelete(file, name.c_str());
        break;
      }
      case 2: edit_dataset(file, program); break;
      case 3: H5Ldelete(file, seed().datasets[program.byte() % seed().datasets.size()].c_str(), H5P_DEFAULT); break;
      case 4: nest_groups(file, program); break;
      case 5: link(file, program); break;
      default: named_type(file, program); break;
    }
  }
  H5Fclose(file);
  hpctrain::fuzz::verify_then_restore(path);
  return 0;
}
