// Writes checkpoints one at a time and keeps the newest K (and the best). In background mode
// the write (HDF5 encoding, checksums, fsync, rename) runs on a thread of its
// own while training goes on; training only blocks for the host copy that
// made the Snapshot, and when a new checkpoint arrives before the last is on disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace hpctrain::ckpt {

struct Written {
  std::filesystem::path path;
  std::size_t bytes = 0;
  double seconds = 0;  // from the start of the write to the directory fsync
  std::vector<std::filesystem::path> pruned;
  std::vector<std::string> left_alone;  // files pruning did not take for hpctrain's: "PATH: why"
};

class CheckpointWriter {
 public:
  CheckpointWriter(std::int64_t keep, bool background) : keep_(keep), background_(background) {}
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Waits for any previous write first (call wait() before to see its result).
  // Pruning afterwards spares `kept` (the best checkpoint; empty: none).
  void write(const std::filesystem::path& path, Snapshot snapshot, const std::filesystem::path& kept = {});
  // The write in progress, if it has finished (rethrows its failure).
  std::optional<Written> finished();
  // Waits for the write in progress (rethrows its failure).
  std::optional<Written> wait();

 private:
  std::int64_t keep_;
  bool background_;
  std::future<Written> pending_;
};

}  // namespace hpctrain::ckpt
