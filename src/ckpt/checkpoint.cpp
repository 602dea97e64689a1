#include "ckpt/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "handles/hdf5.h"
#include "handles/mpi.h"

namespace hpctrain::ckpt {
namespace {

using handles::check_h5;
using handles::check_h5_status;
using handles::H5Id;

constexpr hsize_t kChunkElements = hsize_t{1} << 20;

void write_string_attribute(hid_t object, const char* name, const std::string& value) {
  const H5Id type(check_h5(H5Tcopy(H5T_C_S1), "H5Tcopy"));
  check_h5_status(H5Tset_size(type.get(), std::max<std::size_t>(1, value.size())), "H5Tset_size");
  const H5Id space(check_h5(H5Screate(H5S_SCALAR), "H5Screate"));
  const H5Id attribute(check_h5(H5Acreate2(object, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), name));
  check_h5_status(H5Awrite(attribute.get(), type.get(), value.empty() ? "" : value.data()), name);
}

void write_int_attribute(hid_t object, const char* name, std::int64_t value) {
  const H5Id space(check_h5(H5Screate(H5S_SCALAR), "H5Screate"));
  const H5Id attribute(check_h5(H5Acreate2(object, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), name));
  check_h5_status(H5Awrite(attribute.get(), H5T_NATIVE_INT64, &value), name);
}

std::string read_string_attribute(hid_t object, const char* name, const std::string& file) {
  const H5Id attribute(check_h5(H5Aopen(object, name, H5P_DEFAULT), fmt::format("{}: attribute {}", file, name)));
  const H5Id type(check_h5(H5Aget_type(attribute.get()), name));
  std::string value(H5Tget_size(type.get()), '\0');
  check_h5_status(H5Aread(attribute.get(), type.get(), value.data()), fmt::format("{}: attribute {}", file, name));
  value.resize(std::strlen(value.c_str()));
  return value;
}

std::int64_t read_int_attribute(hid_t object, const char* name, const std::string& file) {
  const H5Id attribute(check_h5(H5Aopen(object, name, H5P_DEFAULT), fmt::format("{}: attribute {}", file, name)));
  std::int64_t value = 0;
  check_h5_status(H5Aread(attribute.get(), H5T_NATIVE_INT64, &value), fmt::format("{}: attribute {}", file, name));
  return value;
}

H5Id open_file(const std::filesystem::path& path) {
  handles::quiet_hdf5_errors();
  if (!std::filesystem::is_regular_file(path))
    throw CheckpointError(fmt::format("{}: no such checkpoint", path.string()));
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0)
    throw CheckpointError(fmt::format("{}: not a readable HDF5 file (truncated or corrupt?)", path.string()));
  return H5Id(file);
}

void fsync_path(const std::filesystem::path& path, bool directory) {
  const int fd = open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) throw CheckpointError(fmt::format("{}: cannot open to fsync", path.string()));
  const int rc = fsync(fd);
  close(fd);
  if (rc != 0) throw CheckpointError(fmt::format("{}: fsync failed", path.string()));
}

std::string library_versions() {
  unsigned major = 0, minor = 0, release = 0;
  H5get_libversion(&major, &minor, &release);
  return fmt::format("hpctrain {}; LibTorch {}; HDF5 {}.{}.{}; {}", HPCTRAIN_VERSION, TORCH_VERSION, major, minor,
                     release, handles::MpiRuntime::library_version());
}

}  // namespace

std::filesystem::path checkpoint_path(const std::filesystem::path& run_dir, std::int64_t step) {
  return run_dir / "checkpoints" / fmt::format("step-{:08}.h5", step);
}

void write_checkpoint(const std::filesystem::path& path, const model::LanguageModel& model, CheckpointInfo info) {
  handles::quiet_hdf5_errors();
  std::filesystem::create_directories(path.parent_path());
  const std::filesystem::path tmp = path.string() + fmt::format(".tmp-{}", getpid());
  {
    const H5Id file(check_h5(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), tmp.string()));
    info.git_commit = HPCTRAIN_GIT_COMMIT;
    info.versions = library_versions();
    write_int_attribute(file.get(), "step", info.step);
    write_int_attribute(file.get(), "world_size", info.world_size);
    write_string_attribute(file.get(), "config", info.config_toml);
    write_string_attribute(file.get(), "git_commit", info.git_commit);
    write_string_attribute(file.get(), "versions", info.versions);
    const H5Id group(check_h5(H5Gcreate2(file.get(), "model", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), "/model"));
    for (const auto& item : model.named_parameters()) {
      const torch::Tensor t = item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous();
      std::vector<hsize_t> dims(t.sizes().begin(), t.sizes().end());
      if (dims.empty()) dims.push_back(1);
      // Fletcher32 needs chunking; chunks of whole rows, about 1M elements.
      std::vector<hsize_t> chunk = dims;
      const hsize_t row = std::max<hsize_t>(1, static_cast<hsize_t>(t.numel()) / std::max<hsize_t>(1, dims[0]));
      chunk[0] = std::clamp<hsize_t>(kChunkElements / row, 1, dims[0]);
      const H5Id space(check_h5(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), item.key()));
      const H5Id properties(check_h5(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"));
      check_h5_status(H5Pset_chunk(properties.get(), static_cast<int>(chunk.size()), chunk.data()), item.key());
      check_h5_status(H5Pset_fletcher32(properties.get()), item.key());
      const H5Id dataset(check_h5(H5Dcreate2(group.get(), item.key().c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                                             properties.get(), H5P_DEFAULT),
                                  item.key()));
      check_h5_status(H5Dwrite(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data_ptr()),
                      fmt::format("{}: writing {}", tmp.string(), item.key()));
    }
    check_h5_status(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "H5Fflush");
  }
  fsync_path(tmp, false);
  std::filesystem::rename(tmp, path);
  fsync_path(path.parent_path(), true);
}

CheckpointInfo read_checkpoint_info(const std::filesystem::path& path) {
  const H5Id file = open_file(path);
  CheckpointInfo info;
  const std::string name = path.string();
  info.step = read_int_attribute(file.get(), "step", name);
  info.world_size = read_int_attribute(file.get(), "world_size", name);
  info.config_toml = read_string_attribute(file.get(), "config", name);
  info.git_commit = read_string_attribute(file.get(), "git_commit", name);
  info.versions = read_string_attribute(file.get(), "versions", name);
  return info;
}

void load_weights(const std::filesystem::path& path, model::LanguageModel& model) {
  const H5Id file = open_file(path);
  const std::string name = path.string();
  const H5Id group(check_h5(H5Gopen2(file.get(), "model", H5P_DEFAULT), name + ": /model"));
  hsize_t count = 0;
  check_h5_status(H5Gget_num_objs(group.get(), &count), name);
  std::map<std::string, bool> in_file;
  for (hsize_t i = 0; i < count; ++i) {
    const ssize_t length = H5Gget_objname_by_idx(group.get(), i, nullptr, 0);
    std::string member(static_cast<std::size_t>(length) + 1, '\0');
    H5Gget_objname_by_idx(group.get(), i, member.data(), member.size());
    member.resize(static_cast<std::size_t>(length));
    in_file[member] = false;
  }
  std::vector<std::string> problems;
  torch::NoGradGuard no_grad;
  for (auto& item : model.named_parameters()) {
    const auto it = in_file.find(item.key());
    if (it == in_file.end()) {
      problems.push_back(fmt::format("missing {} ({})", item.key(), fmt::join(item.value().sizes().vec(), "x")));
      continue;
    }
    it->second = true;
    const H5Id dataset(check_h5(H5Dopen2(group.get(), item.key().c_str(), H5P_DEFAULT), item.key()));
    const H5Id space(check_h5(H5Dget_space(dataset.get()), item.key()));
    std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space.get())));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    const std::vector<std::int64_t> file_shape(dims.begin(), dims.end());
    if (file_shape != item.value().sizes().vec()) {
      problems.push_back(fmt::format("{}: checkpoint {} vs model {}", item.key(), fmt::join(file_shape, "x"),
                                     fmt::join(item.value().sizes().vec(), "x")));
      continue;
    }
    torch::Tensor buffer = torch::empty(item.value().sizes(), torch::kFloat32);
    // Fletcher32 is verified here: a flipped bit makes the read fail.
    if (H5Dread(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data_ptr()) < 0) {
      throw CheckpointError(fmt::format("{}: {} fails its checksum or cannot be read", name, item.key()));
    }
    item.value().copy_(buffer);
  }
  for (const auto& [member, used] : in_file) {
    if (!used) problems.push_back(fmt::format("unexpected {}", member));
  }
  if (!problems.empty()) {
    throw CheckpointError(fmt::format("{} does not fit this model ({} difference{}): {}", name, problems.size(),
                                      problems.size() == 1 ? "" : "s", fmt::join(problems, "; ")));
  }
}

std::filesystem::path find_checkpoint(const std::filesystem::path& run_dir_or_file) {
  if (std::filesystem::is_regular_file(run_dir_or_file)) return run_dir_or_file;
  const auto dir = run_dir_or_file / "checkpoints";
  std::vector<std::filesystem::path> found;
  if (std::filesystem::is_directory(dir)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const auto file = entry.path().filename().string();
      if (file.rfind("step-", 0) == 0 && entry.path().extension() == ".h5") found.push_back(entry.path());
    }
  }
  if (found.empty()) {
    throw CheckpointError(
        fmt::format("{}: no checkpoint (expected a .h5 file, or a run directory with "
                    "checkpoints/step-*.h5)",
                    run_dir_or_file.string()));
  }
  return *std::max_element(found.begin(), found.end());
}

}  // namespace hpctrain::ckpt
