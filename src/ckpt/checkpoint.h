// One checkpoint = one HDF5 file, RUN_DIR/checkpoints/step-NNNNNNNN.h5
// (layout in docs/checkpoints.md). A Snapshot is everything a checkpoint
// holds, already copied to host memory, so it can be written while training
// goes on. Files are written to a temporary name, flushed, fsynced and renamed
// (and the directory fsynced): a checkpoint is either complete or absent.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ckpt/hdf5_file.h"
#include "model/language_model.h"

namespace hpctrain::ckpt {

// Bumped when the layout changes incompatibly; readers refuse newer files.
constexpr std::int64_t kFormatVersion = 2;

struct CheckpointInfo {
  std::int64_t step = 0;
  std::int64_t world_size = 1;
  std::string reducer = "ddp";  // ddp: one replica; ddap: per-rank replicas under /replicas
  std::string config_toml;      // the resolved experiment
  std::string tokenizer_sha256;
  std::string git_commit;  // filled in by the writer
  std::string versions;    // filled in by the writer
};

struct Snapshot {
  CheckpointInfo info;
  std::vector<std::pair<std::string, std::int64_t>> ints;  // further root attributes
  std::vector<std::pair<std::string, double>> reals;
  std::vector<std::pair<std::string, at::Tensor>> tensors;  // dataset path -> CPU tensor
  [[nodiscard]] std::size_t bytes() const;
};

// Host copies of the model's parameters as GROUP/<parameter name>, float32.
void add_parameters(Snapshot& snapshot, const std::string& group, const model::LanguageModel& model);

// RUN_DIR/checkpoints/step-NNNNNNNN.h5
std::filesystem::path checkpoint_path(const std::filesystem::path& run_dir, std::int64_t step);

// Atomic: PATH.tmp-PID, flush, fsync, rename, fsync of the directory.
void write_checkpoint(const std::filesystem::path& path, Snapshot snapshot);

// The root attributes; throws CheckpointError when the file is unreadable or
// was written by a newer format.
CheckpointInfo read_checkpoint_info(const Hdf5Reader& file);
CheckpointInfo read_checkpoint_info(const std::filesystem::path& path);

// Copies GROUP/<name> into every parameter. Throws CheckpointError listing
// every missing, unexpected or differently shaped parameter.
void load_parameters(const Hdf5Reader& file, const std::string& group, model::LanguageModel& model);
void load_weights(const std::filesystem::path& path, model::LanguageModel& model);

// A checkpoint file as given, or the newest step-*.h5 in RUN_DIR/checkpoints.
std::filesystem::path find_checkpoint(const std::filesystem::path& run_dir_or_file);

}  // namespace hpctrain::ckpt
