// What a checkpoint says about itself: the root attributes that name its step,
// world size, reducer, resolved config and provenance, and the format version
// that tells a reader what else it holds (docs/checkpoints.md keeps the history).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "ckpt_file/hdf5_file.h"

namespace hpctrain::ckpt_file {

// Bumped when the layout changes; readers refuse newer files and still read
// the older ones.
constexpr std::int64_t kFormatVersion = 8;
// Format 1 held the weights only; from 2 on a checkpoint can resume training.
constexpr std::int64_t kFirstTrainingStateFormat = 2;

struct CheckpointInfo {
  std::int64_t format = kFormatVersion;
  std::int64_t step = 0;
  std::int64_t world_size = 1;
  std::string reducer = "ddp";  // ddp: one replica; ddap: per-rank replicas under /replicas
  std::string config_toml;      // the resolved experiment
  std::string tokenizer_sha256;
  std::string git_commit;  // filled in by the writer
  std::string versions;    // filled in by the writer
};

// The root attributes, checked for plausibility (a step of at least 0, a
// world size from 1 to 2^20, a reducer hpctrain knows); throws CheckpointError
// naming the attribute when the file is unreadable, implausible or was
// written by a newer format.
CheckpointInfo read_checkpoint_info(const Hdf5Reader& file);
CheckpointInfo read_checkpoint_info(const std::filesystem::path& path);

}  // namespace hpctrain::ckpt_file
