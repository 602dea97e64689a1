#include "ckpt/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <torch/version.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "ckpt_file/checkpoint_files.h"
#include "handles/hdf5.h"
#include "handles/mpi.h"
#include "support/build_info.h"
#include "support/no_follow.h"

namespace hpctrain::ckpt {
namespace {

// A file is opened without following a link or blocking (a FIFO swapped in
// for the temporary must not stop the writer); a directory (the run's
// checkpoints/, which may be its owner's link) as it is.
void fsync_path(const std::filesystem::path& path, bool directory) {
  const int fd = open(path.c_str(),
                      directory ? O_RDONLY | O_DIRECTORY | O_CLOEXEC : O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw CheckpointError(fmt::format("{}: cannot open to fsync", path.string()));
  const int rc = fsync(fd);
  close(fd);
  if (rc != 0) throw CheckpointError(fmt::format("{}: fsync failed", path.string()));
}

std::string library_versions() {
  return fmt::format("hpctrain {}; LibTorch {}; HDF5 {}; {}", support::build_info().version, TORCH_VERSION,
                     handles::hdf5_library_version(), handles::MpiRuntime::library_version());
}

torch::ScalarType scalar_type(ckpt_file::ElementType type) {
  switch (type) {
    case ckpt_file::ElementType::kFloat32: return torch::kFloat32;
    case ckpt_file::ElementType::kFloat64: return torch::kFloat64;
    case ckpt_file::ElementType::kInt64: return torch::kInt64;
    case ckpt_file::ElementType::kUInt8: return torch::kUInt8;
  }
  throw CheckpointError("an element type hpctrain does not write");
}

ckpt_file::ElementType element_type(const at::Tensor& t, const std::string& name) {
  switch (t.scalar_type()) {
    case torch::kFloat32: return ckpt_file::ElementType::kFloat32;
    case torch::kFloat64: return ckpt_file::ElementType::kFloat64;
    case torch::kInt64: return ckpt_file::ElementType::kInt64;
    case torch::kUInt8: return ckpt_file::ElementType::kUInt8;
    default: throw CheckpointError(fmt::format("{}: cannot store {} tensors", name, c10::toString(t.scalar_type())));
  }
}

}  // namespace

at::Tensor read_tensor(const StoredCheckpoint& file, const std::string& dataset) {
  const ckpt_file::ArrayInfo info = file.info(dataset);
  torch::Tensor out = torch::empty(info.shape, torch::TensorOptions().dtype(scalar_type(info.type)));
  file.read(dataset, out.data_ptr(), info.bytes);
  return out;
}

CheckpointReader::CheckpointReader(const std::filesystem::path& path)
    : file_(path), info_(ckpt_file::read_checkpoint_info(file_.index())) {}

at::Tensor CheckpointReader::tensor(const std::string& dataset, std::int64_t elements, at::ScalarType type) const {
  torch::Tensor t = read_tensor(file_, dataset);
  if (t.numel() != elements || t.scalar_type() != type) {
    throw CheckpointError(fmt::format("{}: dataset {} holds {} {} values, {} {} expected", name(), dataset, t.numel(),
                                      c10::toString(t.scalar_type()), elements, c10::toString(type)));
  }
  return t;
}

std::int64_t CheckpointReader::integer(const std::string& attribute, std::int64_t min) const {
  const std::int64_t value = file_.int_attribute(attribute);
  if (value < min) throw CheckpointError(fmt::format("{}: attribute {} is {}", name(), attribute, value));
  return value;
}

std::size_t Snapshot::bytes() const {
  std::size_t total = 0;
  for (const auto& [name, t] : tensors) total += static_cast<std::size_t>(t.numel()) * t.element_size();
  return total;
}

void add_parameters(Snapshot& snapshot, const std::string& group, const model::LanguageModel& model,
                    const std::vector<bool>& keep) {
  std::size_t i = 0;
  for (const auto& item : model.named_parameters()) {
    if (!keep.empty() && !keep.at(i++)) continue;
    // clone(): the snapshot must not change when training goes on.
    snapshot.tensors.emplace_back(group + "/" + item.key(),
                                  item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous().clone());
  }
}

void add_parameters(Snapshot& snapshot, const std::string& group, const at::Tensor& flat,
                    const model::LanguageModel& model) {
  const torch::Tensor host = flat.detach().to(torch::kCPU, torch::kFloat32).contiguous();
  std::int64_t offset = 0;
  for (const auto& item : model.named_parameters()) {
    const std::int64_t n = item.value().numel();
    snapshot.tensors.emplace_back(group + "/" + item.key(),
                                  host.narrow(0, offset, n).reshape(item.value().sizes()).clone());
    offset += n;
  }
}

at::Tensor read_flat_parameters(const CheckpointReader& checkpoint, const std::string& group,
                                const model::LanguageModel& model) {
  std::vector<torch::Tensor> parts;
  for (const auto& item : model.named_parameters()) {
    parts.push_back(checkpoint.tensor(group + "/" + item.key(), item.value().numel(), torch::kFloat32).reshape({-1}));
  }
  return torch::cat(parts);
}

std::filesystem::path checkpoint_path(const std::filesystem::path& run_dir, std::int64_t step) {
  return run_dir / "checkpoints" / ckpt_file::checkpoint_file_name(step);
}

namespace {

void add_arrays(ckpt_file::Hdf5Writer& file, Snapshot& snapshot) {
  std::vector<ckpt_file::ArrayView> arrays;
  arrays.reserve(snapshot.tensors.size());
  for (auto& [name, t] : snapshot.tensors) {
    t = t.contiguous();
    arrays.push_back({name, element_type(t, name), t.sizes().vec(), t.data_ptr()});
  }
  file.arrays(arrays);
}

void add_root_attributes(ckpt_file::Hdf5Writer& file, Snapshot& snapshot) {
  ckpt_file::CheckpointInfo& info = snapshot.info;
  info.git_commit = support::commit_with_state();
  info.versions = library_versions();
  file.attribute("format_version", ckpt_file::kFormatVersion);
  file.attribute("step", info.step);
  file.attribute("world_size", info.world_size);
  file.attribute("reducer", info.reducer);
  file.attribute("config", info.config_toml);
  file.attribute("tokenizer_sha256", info.tokenizer_sha256);
  file.attribute("git_commit", info.git_commit);
  file.attribute("versions", info.versions);
  for (const auto& [name, value] : snapshot.ints) file.attribute(name, value);
  for (const auto& [name, value] : snapshot.reals) file.attribute(name, value);
}

// Moves the finished temporary to `path`. Something already there is replaced
// only when it is a checkpoint hpctrain wrote for the same step; anything
// else (a directory, a FIFO, a file of someone's) stops the write with its
// name, and stays as it was.
void put_in_place(const std::filesystem::path& tmp, const std::filesystem::path& path, std::int64_t step) {
  if (support::rename_unless_taken(tmp, path)) return;
  if (ckpt_file::written_by_hpctrain(path, step)) {
    std::filesystem::rename(tmp, path);
    return;
  }
  std::error_code ec;
  std::filesystem::remove(tmp, ec);
  throw CheckpointError(
      fmt::format("{}: {} stands there that hpctrain did not write for step {}: move it away to "
                  "let the checkpoint be written",
                  path.string(), support::what_is_at(path), step));
}

// Writes PATH.tmp-PID with `fill`, fsyncs it, moves it to PATH and fsyncs the
// directory. The temporary is created exclusively (libhdf5's H5F_ACC_EXCL is
// O_CREAT | O_EXCL, which no link satisfies): a file or link planted under
// its name makes the write fail instead of truncating what the link names.
template <typename Fill>
void write_atomically(const std::filesystem::path& path, std::int64_t step, Fill fill) {
  const std::filesystem::path tmp = ckpt_file::temporary_name(path);
  {
    ckpt_file::Hdf5Writer file(tmp);
    try {
      fill(file);
      file.finish();
    } catch (...) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);  // ours: created above
      throw;
    }
  }
  fsync_path(tmp, false);
  put_in_place(tmp, path, step);
  fsync_path(path.parent_path(), true);
}

}  // namespace

void write_checkpoint(const std::filesystem::path& path, Snapshot snapshot) {
  // The run's checkpoints/ may be a link its owner made (to scratch space);
  // below it, hpctrain makes and follows none.
  std::filesystem::create_directories(path.parent_path());
  write_atomically(path, snapshot.info.step, [&](ckpt_file::Hdf5Writer& file) {
    add_root_attributes(file, snapshot);
    add_arrays(file, snapshot);
  });
}

ckpt_file::ShardEntry write_shard(const std::filesystem::path& index, std::int64_t shard, std::int64_t shards,
                                  Snapshot snapshot) {
  ckpt_file::ShardEntry entry;
  entry.file = ckpt_file::shard_file_name(shard);
  const auto dir = ckpt_file::shard_directory(index);
  std::filesystem::create_directories(index.parent_path());
  support::make_real_directory(dir, "shard directory");
  const auto path = dir / entry.file;
  write_atomically(path, snapshot.info.step, [&](ckpt_file::Hdf5Writer& file) {
    file.attribute("format_version", ckpt_file::kFormatVersion);
    file.attribute("step", snapshot.info.step);
    file.attribute(ckpt_file::kShardAttribute, shard);
    file.attribute(ckpt_file::kShardsAttribute, shards);
    add_arrays(file, snapshot);
  });
  entry.bytes = std::filesystem::file_size(path);
  entry.sha256 = support::to_hex(ckpt_file::sha256_of_file(path));
  return entry;
}

void write_index(const std::filesystem::path& index, Snapshot snapshot,
                 const std::vector<ckpt_file::ShardEntry>& shards) {
  if (!snapshot.tensors.empty()) throw CheckpointError(index.string() + ": an index holds no tensors");
  std::filesystem::create_directories(index.parent_path());
  write_atomically(index, snapshot.info.step, [&](ckpt_file::Hdf5Writer& file) {
    add_root_attributes(file, snapshot);
    file.attribute(ckpt_file::kShardsAttribute, static_cast<std::int64_t>(shards.size()));
    file.attribute(ckpt_file::kShardFilesAttribute, ckpt_file::format_shard_table(shards));
  });
}

void load_parameters(const StoredCheckpoint& file, const std::string& group, model::LanguageModel& model) {
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
    const auto stored = file.info(group + "/" + item.key()).shape;
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
  for (auto& [parameter, dataset] : fitting) parameter.copy_(read_tensor(file, dataset));
}

void load_weights(const std::filesystem::path& path, model::LanguageModel& model) {
  const StoredCheckpoint file(path);
  (void)ckpt_file::read_checkpoint_info(file.index());
  load_parameters(file, "model", model);
}

}  // namespace hpctrain::ckpt
