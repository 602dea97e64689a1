#include "ckpt/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "ckpt/checkpoint_files.h"
#include "handles/mpi.h"

namespace hpctrain::ckpt {
namespace {

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

std::size_t Snapshot::bytes() const {
  std::size_t total = 0;
  for (const auto& [name, t] : tensors) total += static_cast<std::size_t>(t.numel()) * t.element_size();
  return total;
}

void add_parameters(Snapshot& snapshot, const std::string& group, const model::LanguageModel& model) {
  for (const auto& item : model.named_parameters()) {
    // clone(): the snapshot must not change when training goes on.
    snapshot.tensors.emplace_back(group + "/" + item.key(),
                                  item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous().clone());
  }
}

std::filesystem::path checkpoint_path(const std::filesystem::path& run_dir, std::int64_t step) {
  return run_dir / "checkpoints" / checkpoint_file_name(step);
}

void write_checkpoint(const std::filesystem::path& path, Snapshot snapshot) {
  std::filesystem::create_directories(path.parent_path());
  const std::filesystem::path tmp = temporary_name(path);
  {
    Hdf5Writer file(tmp);
    CheckpointInfo& info = snapshot.info;
    info.git_commit = HPCTRAIN_GIT_COMMIT;
    info.versions = library_versions();
    file.attribute("format_version", kFormatVersion);
    file.attribute("step", info.step);
    file.attribute("world_size", info.world_size);
    file.attribute("reducer", info.reducer);
    file.attribute("config", info.config_toml);
    file.attribute("tokenizer_sha256", info.tokenizer_sha256);
    file.attribute("git_commit", info.git_commit);
    file.attribute("versions", info.versions);
    for (const auto& [name, value] : snapshot.ints) file.attribute(name, value);
    for (const auto& [name, value] : snapshot.reals) file.attribute(name, value);
    file.tensors(snapshot.tensors);
    file.flush();
  }
  fsync_path(tmp, false);
  std::filesystem::rename(tmp, path);
  fsync_path(path.parent_path(), true);
}

CheckpointInfo read_checkpoint_info(const Hdf5Reader& file) {
  const std::int64_t version = file.has_attribute("format_version") ? file.int_attribute("format_version") : 1;
  if (version > kFormatVersion) {
    throw CheckpointError(fmt::format("{}: checkpoint format {} is newer than this hpctrain reads ({})", file.name(),
                                      version, kFormatVersion));
  }
  CheckpointInfo info;
  info.step = file.int_attribute("step");
  info.world_size = file.int_attribute("world_size");
  info.config_toml = file.string_attribute("config");
  info.git_commit = file.string_attribute("git_commit");
  info.versions = file.string_attribute("versions");
  if (version >= 2) {
    info.reducer = file.string_attribute("reducer");
    info.tokenizer_sha256 = file.string_attribute("tokenizer_sha256");
  }
  return info;
}

CheckpointInfo read_checkpoint_info(const std::filesystem::path& path) {
  return read_checkpoint_info(Hdf5Reader(path));
}

void load_parameters(const Hdf5Reader& file, const std::string& group, model::LanguageModel& model) {
  std::map<std::string, bool> in_file;
  for (auto& member : file.members(group)) in_file[member] = false;
  std::vector<std::string> problems;
  std::vector<std::pair<torch::Tensor, std::string>> fitting;
  for (auto& item : model.named_parameters()) {
    const auto it = in_file.find(item.key());
    if (it == in_file.end()) {
      problems.push_back(fmt::format("missing {} ({})", item.key(), fmt::join(item.value().sizes().vec(), "x")));
      continue;
    }
    it->second = true;
    const auto stored = file.shape(group + "/" + item.key());
    if (stored != item.value().sizes().vec()) {
      problems.push_back(fmt::format("{}: checkpoint {} vs model {}", item.key(), fmt::join(stored, "x"),
                                     fmt::join(item.value().sizes().vec(), "x")));
      continue;
    }
    fitting.emplace_back(item.value(), group + "/" + item.key());
  }
  for (const auto& [member, used] : in_file) {
    if (!used) problems.push_back(fmt::format("unexpected {}", member));
  }
  if (!problems.empty()) {
    throw CheckpointError(fmt::format("{} does not fit this model ({} difference{}): {}", file.name(), problems.size(),
                                      problems.size() == 1 ? "" : "s", fmt::join(problems, "; ")));
  }
  torch::NoGradGuard no_grad;
  for (auto& [parameter, dataset] : fitting) parameter.copy_(file.tensor(dataset));
}

void load_weights(const std::filesystem::path& path, model::LanguageModel& model) {
  const Hdf5Reader file(path);
  (void)read_checkpoint_info(file);
  load_parameters(file, "model", model);
}

std::filesystem::path find_checkpoint(const std::filesystem::path& run_dir_or_file) {
  if (std::filesystem::is_regular_file(run_dir_or_file)) return run_dir_or_file;
  const auto found = list_checkpoints(run_dir_or_file / "checkpoints");
  if (found.empty()) {
    throw CheckpointError(
        fmt::format("{}: no checkpoint (expected a .h5 file, or a run directory with checkpoints/step-*.h5)",
                    run_dir_or_file.string()));
  }
  return found.front();
}

}  // namespace hpctrain::ckpt
