// Model checkpoints in HDF5 (docs/checkpoints.md):
//   /model/<parameter name>   float32, chunked, Fletcher32-checksummed
//   root attributes           step, world_size, config (the resolved TOML),
//                             git_commit, versions
// Written to PATH.tmp-PID, flushed, fsynced and renamed, so a checkpoint is
// either complete or absent. (Optimizer, RNG, data and reducer state, keeping
// the last K and auto-resume come with the checkpoint issue.)
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "model/language_model.h"

namespace hpctrain::ckpt {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckpointInfo {
  std::int64_t step = 0;
  std::int64_t world_size = 1;
  std::string config_toml;
  std::string git_commit;
  std::string versions;
};

// RUN_DIR/checkpoints/step-NNNNNNNN.h5
std::filesystem::path checkpoint_path(const std::filesystem::path& run_dir, std::int64_t step);

void write_checkpoint(const std::filesystem::path& path, const model::LanguageModel& model, CheckpointInfo info);

CheckpointInfo read_checkpoint_info(const std::filesystem::path& path);

// Copies the checkpoint's parameters into `model`. Throws CheckpointError
// listing every missing, unexpected or differently shaped parameter.
void load_weights(const std::filesystem::path& path, model::LanguageModel& model);

// A checkpoint file as given, or the newest one in RUN_DIR/checkpoints.
std::filesystem::path find_checkpoint(const std::filesystem::path& run_dir_or_file);

}  // namespace hpctrain::ckpt
