// A checkpoint as readers see it, one file or sharded (shard_table.h): the
// index's root attributes, and every dataset found in whichever file holds
// it. Single-file checkpoints read exactly as before. A sharded one opens its
// index and, one at a time, every shard the index lists, checks that each
// exists with the listed size, belongs to this step and this position, and
// that no dataset is in two files; then it keeps one shard open at a time,
// the one last read from, so a rank never holds N files open. The
// whole-file digests are checked by verification (verify.h), which runs
// before anything trusts a checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ckpt_file/hdf5_file.h"

namespace hpctrain::ckpt_file {

class StoredCheckpoint {
 public:
  explicit StoredCheckpoint(const std::filesystem::path& path);

  // The index's (or the only file's) name, as errors name it.
  [[nodiscard]] const std::string& name() const { return index_.name(); }
  [[nodiscard]] const Hdf5Reader& index() const { return index_; }
  // How many shard files (0 for a single-file checkpoint).
  [[nodiscard]] std::size_t shard_count() const { return shard_paths_.size(); }

  [[nodiscard]] bool has(const std::string& dataset) const { return where_.count(dataset) != 0; }
  [[nodiscard]] bool has_group(const std::string& group) const;
  // Every dataset of every file, by path, sorted.
  [[nodiscard]] const std::vector<std::string>& datasets() const { return datasets_; }
  [[nodiscard]] std::vector<std::string> members(const std::string& group) const;
  [[nodiscard]] ArrayInfo info(const std::string& dataset) const { return holder(dataset).info(dataset); }
  void read(const std::string& dataset, void* out, std::size_t bytes) const {
    holder(dataset).read(dataset, out, bytes);
  }

  // Root attributes: the index's.
  [[nodiscard]] bool has_attribute(const std::string& name) const { return index_.has_attribute(name); }
  [[nodiscard]] std::int64_t int_attribute(const std::string& name) const { return index_.int_attribute(name); }
  [[nodiscard]] double real_attribute(const std::string& name) const { return index_.real_attribute(name); }
  [[nodiscard]] std::string string_attribute(const std::string& name) const { return index_.string_attribute(name); }

 private:
  [[nodiscard]] const Hdf5Reader& holder(const std::string& dataset) const;

  Hdf5Reader index_;
  std::vector<std::filesystem::path> shard_paths_;
  std::map<std::string, std::int64_t> where_;  // dataset -> shard; -1: the index
  std::vector<std::string> datasets_;
  mutable std::unique_ptr<Hdf5Reader> open_;  // the shard last read from
  mutable std::int64_t open_shard_ = -1;
};

}  // namespace hpctrain::ckpt_file
