// One checkpoint = one HDF5 file, RUN_DIR/checkpoints/step-NNNNNNNN.h5, or
// with checkpoint.sharded an index of that name and one shard per rank
// (ckpt_file/shard_table.h; layout in docs/checkpoints.md). A Snapshot is
// everything a checkpoint holds, or a rank's part of it, already copied to
// host memory, so it can be written while training goes on. Files are written
// to a temporary name, flushed, fsynced and renamed (and the directory
// fsynced): a checkpoint is either complete or absent.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ckpt_file/checkpoint_info.h"
#include "ckpt_file/hdf5_file.h"
#include "ckpt_file/shard_table.h"
#include "ckpt_file/stored_checkpoint.h"
#include "model/language_model.h"

namespace hpctrain::ckpt {

using ckpt_file::CheckpointError;
using ckpt_file::StoredCheckpoint;

struct Snapshot {
  // Sharded (checkpoint.sharded): every rank adds the datasets its shard
  // holds, and rank 0 the root attributes; otherwise rank 0 adds everything.
  bool sharded = false;
  ckpt_file::CheckpointInfo info;
  std::vector<std::pair<std::string, std::int64_t>> ints;  // further root attributes
  std::vector<std::pair<std::string, double>> reals;
  std::vector<std::pair<std::string, at::Tensor>> tensors;  // dataset path -> CPU tensor
  [[nodiscard]] std::size_t bytes() const;
};

// Host copies of the model's parameters as GROUP/<parameter name>, float32.
// `keep`, when given, has one entry per parameter in registration order and
// says which to add (a sharded checkpoint's share).
void add_parameters(Snapshot& snapshot, const std::string& group, const model::LanguageModel& model,
                    const std::vector<bool>& keep = {});
// The same from `flat`, one fp32 vector of the model's parameters in
// registration order (an anchor, an average), cut and shaped like them.
void add_parameters(Snapshot& snapshot, const std::string& group, const at::Tensor& flat,
                    const model::LanguageModel& model);

// RUN_DIR/checkpoints/step-NNNNNNNN.h5
std::filesystem::path checkpoint_path(const std::filesystem::path& run_dir, std::int64_t step);

// Atomic: PATH.tmp-PID, flush, fsync, rename, fsync of the directory.
void write_checkpoint(const std::filesystem::path& path, Snapshot snapshot);
// This rank's shard of the sharded checkpoint `index` (its tensors; the
// attributes say which shard of how many, and the step), atomically as
// above; returns its table entry.
ckpt_file::ShardEntry write_shard(const std::filesystem::path& index, std::int64_t shard, std::int64_t shards,
                                  Snapshot snapshot);
// The index, once every shard is on disk: `snapshot`'s root attributes and
// the shard table, atomically; its tensors must be empty.
void write_index(const std::filesystem::path& index, Snapshot snapshot,
                 const std::vector<ckpt_file::ShardEntry>& shards);

// A dataset as a CPU tensor of its stored element type and shape.
at::Tensor read_tensor(const StoredCheckpoint& file, const std::string& dataset);

// A checkpoint opened to restore from: what each component's load() reads,
// with the sizes it needs checked (a checkpoint may come from anywhere).
class CheckpointReader {
 public:
  explicit CheckpointReader(const std::filesystem::path& path);

  [[nodiscard]] const StoredCheckpoint& file() const { return file_; }
  [[nodiscard]] const ckpt_file::CheckpointInfo& info() const { return info_; }
  [[nodiscard]] const std::string& name() const { return file_.name(); }
  [[nodiscard]] bool has(const std::string& dataset) const { return file_.has(dataset); }

  [[nodiscard]] at::Tensor tensor(const std::string& dataset) const { return read_tensor(file_, dataset); }
  // A dataset that must hold exactly `elements` values of `type`.
  [[nodiscard]] at::Tensor tensor(const std::string& dataset, std::int64_t elements, at::ScalarType type) const;
  // A root integer attribute that must be at least `min`.
  [[nodiscard]] std::int64_t integer(const std::string& attribute, std::int64_t min) const;
  [[nodiscard]] double real(const std::string& attribute) const { return file_.real_attribute(attribute); }

 private:
  StoredCheckpoint file_;
  ckpt_file::CheckpointInfo info_;
};

// Copies GROUP/<name> into every parameter. Throws CheckpointError listing
// every missing, unexpected or differently shaped parameter.
void load_parameters(const StoredCheckpoint& file, const std::string& group, model::LanguageModel& model);
// GROUP/<name> of every parameter, each the parameter's size in fp32, as one
// flat CPU vector in registration order (add_parameters' inverse).
at::Tensor read_flat_parameters(const CheckpointReader& checkpoint, const std::string& group,
                                const model::LanguageModel& model);
void load_weights(const std::filesystem::path& path, model::LanguageModel& model);

}  // namespace hpctrain::ckpt
