#include "ckpt_file/stored_checkpoint.h"

#include <fmt/format.h>

#include "ckpt_file/shard_table.h"

namespace hpctrain::ckpt_file {
namespace {

constexpr std::int64_t kMaxShards = std::int64_t{1} << 20;

}  // namespace

StoredCheckpoint::StoredCheckpoint(const std::filesystem::path& path) : index_(path) {
  for (const auto& d : index_.datasets()) where_[d] = -1;
  if (index_.has_attribute(kShardsAttribute)) {
    const std::int64_t count = index_.int_attribute(kShardsAttribute);
    if (count < 1 || count > kMaxShards) {
      throw CheckpointError(fmt::format("{}: attribute {} is {}", name(), kShardsAttribute, count));
    }
    const std::int64_t step = index_.int_attribute("step");
    const auto dir = shard_directory(path);
    const auto table = parse_shard_table(index_.string_attribute(kShardFilesAttribute), count, name());
    for (std::size_t i = 0; i < table.size(); ++i) {
      const auto file = dir / table[i].file;
      std::error_code ec;
      if (!std::filesystem::is_regular_file(file, ec)) {
        throw CheckpointError(fmt::format("{}: shard {} is missing", name(), file.string()));
      }
      if (const auto size = std::filesystem::file_size(file, ec); ec || size != table[i].bytes) {
        throw CheckpointError(fmt::format("{}: shard {} holds {} bytes, the index lists {}", name(), file.string(),
                                          ec ? 0 : size, table[i].bytes));
      }
      const Hdf5Reader shard(file);  // closed again at the end of the iteration
      const auto expect = [&](const char* attribute, std::int64_t want) {
        if (const std::int64_t got = shard.int_attribute(attribute); got != want) {
          throw CheckpointError(fmt::format("{}: attribute {} is {}, the index {} expects {}", shard.name(), attribute,
                                            got, name(), want));
        }
      };
      expect(kShardAttribute, static_cast<std::int64_t>(i));
      expect(kShardsAttribute, count);
      expect("step", step);
      for (const auto& d : shard.datasets()) {
        if (const auto [it, added] = where_.emplace(d, static_cast<std::int64_t>(i)); !added) {
          throw CheckpointError(fmt::format("{}: dataset {} is also in {}", shard.name(), d,
                                            it->second < 0 ? name() : shard_paths_.at(it->second).string()));
        }
      }
      shard_paths_.push_back(file);
    }
  }
  datasets_.reserve(where_.size());
  for (const auto& [d, file] : where_) datasets_.push_back(d);
}

bool StoredCheckpoint::has_group(const std::string& group) const {
  const auto it = where_.lower_bound(group + "/");
  return it != where_.end() && it->first.rfind(group + "/", 0) == 0;
}

std::vector<std::string> StoredCheckpoint::members(const std::string& group) const {
  std::vector<std::string> out;
  const std::string prefix = group + "/";
  for (auto it = where_.lower_bound(prefix); it != where_.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    const std::string rest = it->first.substr(prefix.size());
    if (rest.find('/') == std::string::npos) out.push_back(rest);
  }
  return out;
}

const Hdf5Reader& StoredCheckpoint::holder(const std::string& dataset) const {
  const auto it = where_.find(dataset);
  // The index reports a missing dataset as it always has.
  if (it == where_.end() || it->second < 0) return index_;
  if (open_shard_ != it->second) {
    open_shard_ = -1;  // until the new one is open
    open_.reset();
    open_ = std::make_unique<Hdf5Reader>(shard_paths_.at(static_cast<std::size_t>(it->second)));
    open_shard_ = it->second;
  }
  return *open_;
}

}  // namespace hpctrain::ckpt_file
