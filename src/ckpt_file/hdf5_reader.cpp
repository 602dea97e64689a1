// Reading a checkpoint that may come from anywhere. Before HDF5 parses the
// file, it must be a regular file of plausible size that starts with HDF5's
// signature. On opening, the group structure is walked once, breadth-first,
// with bounds on depth, names and object count; only hard links to groups and
// datasets pass (a soft or external link, a named datatype, a link cycle are
// refused), and the datasets found are the only ones later calls may name.
// Every dataset is checked before it is read (one of our four element types,
// exactly; a simple dataspace of at most kMaxRank dimensions whose byte size
// does not overflow and is backed by stored bytes; no filter but Fletcher32,
// no external or virtual storage), and every attribute before it is read (a
// scalar or one element, of the expected class; strings of fixed length and
// bounded size).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <deque>
#include <fstream>
#include <limits>
#include <set>

#include "ckpt_file/hdf5_file.h"
#include "ckpt_file/hdf5_types.h"

namespace hpctrain::ckpt_file {
namespace {

using handles::check_h5;
using handles::check_h5_status;
using handles::H5Id;

constexpr std::array<unsigned char, 8> kSignature = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{1} << 40;  // 1 TiB
constexpr int kMaxDepth = 8;  // hpctrain writes at most replicas/rank-R/optimizer/exp_avg/<p>
constexpr std::size_t kMaxObjects = 1 << 20;
constexpr std::size_t kMaxNameBytes = 1024;
constexpr std::size_t kMaxStringBytes = std::size_t{64} << 20;  // a resolved config is a few kB
constexpr int kMaxRank = 8;

// A name hpctrain could have written: printable, no '/', '.' or '..' alone.
bool plain_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameBytes || name == "." || name == "..") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u > 0x20 && u != 0x7f && c != '/';
  });
}

void check_before_parsing(const std::filesystem::path& path, const std::string& name) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw CheckpointError(fmt::format("{}: no such checkpoint", name));
  if (!std::filesystem::is_regular_file(status)) {
    throw CheckpointError(fmt::format("{}: not a regular file", name));
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size < kSignature.size()) throw CheckpointError(fmt::format("{}: too short to be a checkpoint", name));
  if (size > kMaxFileBytes) {
    throw CheckpointError(fmt::format("{}: {} bytes, more than a checkpoint may have ({})", name, size, kMaxFileBytes));
  }
  std::array<unsigned char, 8> head{};
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(head.data()), head.size());
  if (!in || head != kSignature) {
    throw CheckpointError(fmt::format("{}: not an HDF5 file (no HDF5 signature at its start)", name));
  }
}

struct Walk {
  std::vector<std::string> datasets;
  std::vector<std::string> groups;
  std::string problem;  // set when the walk stopped on something we refuse
  std::size_t objects = 0;
};

struct GroupVisit {
  Walk* walk;
  std::string prefix;  // "" for the root, "model/" below it
  int depth;
  std::deque<std::pair<std::string, int>>* pending;
};

herr_t visit_link(hid_t group, const char* name, const H5L_info_t* info, void* data) {
  auto* visit = static_cast<GroupVisit*>(data);
  Walk& walk = *visit->walk;
  const std::string link(name);
  const std::string path = visit->prefix + link;
  if (++walk.objects > kMaxObjects) {
    walk.problem = fmt::format("more than {} objects", kMaxObjects);
    return -1;
  }
  if (!plain_name(link)) {
    walk.problem = fmt::format("a link name hpctrain does not write ('{}')", path.substr(0, 64));
    return -1;
  }
  if (info->type != H5L_TYPE_HARD) {
    walk.problem = fmt::format("{} is a soft or external link", path);
    return -1;
  }
  const hid_t object = H5Oopen(group, name, H5P_DEFAULT);
  if (object < 0) {
    walk.problem = fmt::format("{} cannot be opened", path);
    return -1;
  }
  const H5I_type_t type = H5Iget_type(object);
  H5Oclose(object);
  if (type == H5I_DATASET) {
    walk.datasets.push_back(path);
  } else if (type == H5I_GROUP) {
    if (visit->depth + 1 > kMaxDepth) {
      walk.problem = fmt::format("groups nest deeper than {} ({})", kMaxDepth, path.substr(0, 256));
      return -1;
    }
    walk.groups.push_back(path);
    visit->pending->emplace_back(path, visit->depth + 1);
  } else {
    walk.problem = fmt::format("{} is neither a group nor a dataset", path);
    return -1;
  }
  return 0;
}

Walk walk_structure(hid_t file) {
  Walk walk;
  std::deque<std::pair<std::string, int>> pending{{"", 0}};
  while (!pending.empty() && walk.problem.empty()) {
    auto [path, depth] = pending.front();
    pending.pop_front();
    const H5Id group(H5Gopen2(file, path.empty() ? "/" : path.c_str(), H5P_DEFAULT));
    if (group.get() < 0) {
      walk.problem = fmt::format("group {} cannot be opened", path);
      break;
    }
    GroupVisit visit{&walk, path.empty() ? "" : path + "/", depth, &pending};
    hsize_t index = 0;
    if (H5Literate(group.get(), H5_INDEX_NAME, H5_ITER_INC, &index, visit_link, &visit) < 0 && walk.problem.empty()) {
      walk.problem = fmt::format("group {} cannot be listed", path.empty() ? "/" : path);
    }
  }
  std::sort(walk.datasets.begin(), walk.datasets.end());
  std::sort(walk.groups.begin(), walk.groups.end());
  return walk;
}

std::size_t checked_product(const std::vector<hsize_t>& dims, std::size_t element, bool& overflow) {
  std::size_t total = element;
  for (const hsize_t d : dims) {
    if (d != 0 && total > std::numeric_limits<std::size_t>::max() / d) {
      overflow = true;
      return 0;
    }
    total *= static_cast<std::size_t>(d);
  }
  return total;
}

}  // namespace

Hdf5Reader::Hdf5Reader(const std::filesystem::path& path) : name_(path.string()) {
  handles::quiet_hdf5_errors();
  check_before_parsing(path, name_);
  file_bytes_ = std::filesystem::file_size(path);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) throw CheckpointError(fmt::format("{}: not a readable HDF5 file (truncated or corrupt?)", name_));
  file_ = H5Id(file);
  Walk walk = walk_structure(file_.get());
  if (!walk.problem.empty()) throw CheckpointError(fmt::format("{}: {}", name_, walk.problem));
  datasets_ = std::move(walk.datasets);
  groups_ = std::move(walk.groups);
}

bool Hdf5Reader::has(const std::string& dataset) const {
  return std::binary_search(datasets_.begin(), datasets_.end(), dataset);
}

bool Hdf5Reader::has_group(const std::string& group) const {
  return std::binary_search(groups_.begin(), groups_.end(), group);
}

std::vector<std::string> Hdf5Reader::members(const std::string& group) const {
  std::vector<std::string> names;
  const std::string prefix = group + "/";
  for (const auto& d : datasets_) {
    if (d.rfind(prefix, 0) == 0 && d.find('/', prefix.size()) == std::string::npos) {
      names.push_back(d.substr(prefix.size()));
    }
  }
  return names;
}

ArrayInfo Hdf5Reader::info(const std::string& dataset) const {
  const std::string what = fmt::format("{}: dataset {}", name_, dataset);
  if (!has(dataset)) throw CheckpointError(what + " is missing");
  const H5Id set(check_h5(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), what));
  const H5Id type(check_h5(H5Dget_type(set.get()), what));
  const auto element = stored_element_type(type.get());
  if (!element) throw CheckpointError(what + ": an element type hpctrain does not write");
  const H5Id space(check_h5(H5Dget_space(set.get()), what));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (H5Sget_simple_extent_type(space.get()) != H5S_SIMPLE || rank < 1 || rank > kMaxRank) {
    throw CheckpointError(what + ": a dataspace hpctrain does not write");
  }
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  check_h5_status(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr), what);
  ArrayInfo info;
  info.type = *element;
  bool overflow = false;
  info.elements = checked_product(dims, 1, overflow);
  info.bytes = checked_product(dims, element_size(info.type), overflow);
  if (overflow || info.bytes > file_bytes_ || std::any_of(dims.begin(), dims.end(), [](hsize_t d) {
        return d > static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max());
      })) {
    throw CheckpointError(fmt::format("{}: its shape needs more bytes than the file has", what));
  }
  info.shape.assign(dims.begin(), dims.end());

  // Storage: chunks checksummed by Fletcher32 and nothing else, all in this file.
  const H5Id create(check_h5(H5Dget_create_plist(set.get()), what));
  if (H5Pget_external_count(create.get()) != 0) throw CheckpointError(what + ": stored in an external file");
  const H5D_layout_t layout = H5Pget_layout(create.get());
  const int filters = H5Pget_nfilters(create.get());
  if (layout == H5D_CHUNKED) {
    unsigned flags = 0;
    std::size_t values = 0;
    std::array<char, 16> filter_name{};
    if (filters != 1 || H5Pget_filter2(create.get(), 0, &flags, &values, nullptr, filter_name.size(),
                                       filter_name.data(), nullptr) != H5Z_FILTER_FLETCHER32) {
      throw CheckpointError(what + ": filtered by something other than Fletcher32 alone");
    }
  } else if (!(layout == H5D_CONTIGUOUS && filters == 0 && info.bytes == 0)) {
    throw CheckpointError(what + ": a storage layout hpctrain does not write (only empty datasets are unchunked)");
  }
  if (H5Dget_storage_size(set.get()) < info.bytes) {
    throw CheckpointError(what + ": fewer bytes stored than its shape needs");
  }
  return info;
}

void Hdf5Reader::read(const std::string& dataset, void* out, std::size_t bytes) const {
  const ArrayInfo stored = info(dataset);
  const std::string what = fmt::format("{}: dataset {}", name_, dataset);
  if (bytes != stored.bytes) {
    throw CheckpointError(fmt::format("{}: {} bytes stored, {} expected", what, stored.bytes, bytes));
  }
  if (bytes == 0) return;
  const H5Id set(check_h5(H5Dopen2(file_.get(), dataset.c_str(), H5P_DEFAULT), what));
  if (H5Dread(set.get(), h5_type(stored.type).memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
    throw CheckpointError(what + " fails its checksum or cannot be read");
  }
}

std::vector<unsigned char> Hdf5Reader::read(const std::string& dataset) const {
  std::vector<unsigned char> out(info(dataset).bytes);
  read(dataset, out.data(), out.size());
  return out;
}

std::size_t Hdf5Reader::attribute_count() const {
  // The count from the object header: no attribute is decoded. (Listing the
  // attributes by H5Aiterate2 builds a table of all of them, and libhdf5
  // 1.10.8 frees a half-built table on a crafted file and crashes:
  // tests/fuzz/corpus/checkpoint/found-libhdf5-attribute-iterate.h5.)
#if H5_VERSION_GE(1, 12, 0)
  H5O_info2_t info{};
  check_h5_status(H5Oget_info3(file_.get(), &info, H5O_INFO_NUM_ATTRS), name_ + ": counting attributes");
#else
  H5O_info_t info{};
  check_h5_status(H5Oget_info2(file_.get(), &info, H5O_INFO_NUM_ATTRS), name_ + ": counting attributes");
#endif
  return static_cast<std::size_t>(info.num_attrs);
}

bool Hdf5Reader::has_attribute(const std::string& name) const { return H5Aexists(file_.get(), name.c_str()) > 0; }

AttributeKind Hdf5Reader::attribute_kind(const std::string& name) const {
  const std::string what = fmt::format("{}: attribute {}", name_, name);
  if (!has_attribute(name)) throw CheckpointError(what + " is missing");
  const H5Id a(check_h5(H5Aopen(file_.get(), name.c_str(), H5P_DEFAULT), what));
  const H5Id space(check_h5(H5Aget_space(a.get()), what));
  const H5S_class_t shape = H5Sget_simple_extent_type(space.get());
  if (!(shape == H5S_SCALAR || (shape == H5S_SIMPLE && H5Sget_simple_extent_npoints(space.get()) == 1))) {
    throw CheckpointError(what + " is not a single value");
  }
  const H5Id type(check_h5(H5Aget_type(a.get()), what));
  const std::size_t size = H5Tget_size(type.get());
  switch (H5Tget_class(type.get())) {
    case H5T_INTEGER:
      if (size >= 1 && size <= 8) return AttributeKind::kInt;
      break;
    case H5T_FLOAT:
      if (size == 4 || size == 8) return AttributeKind::kReal;
      break;
    case H5T_STRING:
      if (H5Tis_variable_str(type.get()) > 0) throw CheckpointError(what + " is a variable-length string");
      if (size >= 1 && size <= kMaxStringBytes) return AttributeKind::kString;
      break;
    default: break;
  }
  throw CheckpointError(what + ": a type hpctrain does not write");
}

std::int64_t Hdf5Reader::int_attribute(const std::string& name) const {
  const std::string what = fmt::format("{}: attribute {}", name_, name);
  if (attribute_kind(name) != AttributeKind::kInt) throw CheckpointError(what + " is not an integer");
  const H5Id a(check_h5(H5Aopen(file_.get(), name.c_str(), H5P_DEFAULT), what));
  std::int64_t value = 0;
  check_h5_status(H5Aread(a.get(), H5T_NATIVE_INT64, &value), what);
  return value;
}

double Hdf5Reader::real_attribute(const std::string& name) const {
  const std::string what = fmt::format("{}: attribute {}", name_, name);
  if (attribute_kind(name) != AttributeKind::kReal) throw CheckpointError(what + " is not a real number");
  const H5Id a(check_h5(H5Aopen(file_.get(), name.c_str(), H5P_DEFAULT), what));
  double value = 0;
  check_h5_status(H5Aread(a.get(), H5T_NATIVE_DOUBLE, &value), what);
  return value;
}

std::string Hdf5Reader::string_attribute(const std::string& name) const {
  const std::string what = fmt::format("{}: attribute {}", name_, name);
  if (attribute_kind(name) != AttributeKind::kString) throw CheckpointError(what + " is not a string");
  const H5Id a(check_h5(H5Aopen(file_.get(), name.c_str(), H5P_DEFAULT), what));
  const H5Id type(check_h5(H5Aget_type(a.get()), what));
  // The buffer is the attribute's own fixed size, read in its own type: no conversion can write past it.
  std::string value(H5Tget_size(type.get()), '\0');
  check_h5_status(H5Aread(a.get(), type.get(), value.data()), what);
  value.resize(std::strlen(value.c_str()));
  return value;
}

}  // namespace hpctrain::ckpt_file
