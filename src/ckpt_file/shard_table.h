// A sharded checkpoint (format 5 on, checkpoint.sharded): every rank writes
// its own shard file, RUN_DIR/checkpoints/step-NNNNNNNN.shards/rank-RRRRR.h5,
// in parallel, and rank 0 then writes the index, step-NNNNNNNN.h5: the root
// attributes of a single-file checkpoint plus `shards` (their count) and
// `shard_files`, one line per shard with its file name, size in bytes and the
// SHA-256 of the whole file. The index is written last, once every shard is
// on disk, so a checkpoint is complete exactly when its index exists.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/sha256.h"

namespace hpctrain::ckpt_file {

constexpr const char* kShardsAttribute = "shards";
constexpr const char* kShardFilesAttribute = "shard_files";
// A shard's own root attributes: which shard of how many, and the step.
constexpr const char* kShardAttribute = "shard";

struct ShardEntry {
  std::string file;  // rank-RRRRR.h5, inside the shard directory
  std::uintmax_t bytes = 0;
  std::string sha256;  // of the whole file, hex
};

// step-NNNNNNNN.h5 -> step-NNNNNNNN.shards
std::filesystem::path shard_directory(const std::filesystem::path& index);
// rank-RRRRR.h5
std::string shard_file_name(std::int64_t shard);

std::string format_shard_table(const std::vector<ShardEntry>& shards);
// The table an index stores, for `count` shards: exactly one line per shard,
// in order, each naming the file shard_file_name(i) gives (nothing else is
// opened), a size and a 64-digit hex digest. Throws CheckpointError naming
// `file` and the line.
std::vector<ShardEntry> parse_shard_table(const std::string& text, std::int64_t count, const std::string& file);

// The SHA-256 of a whole file, read in blocks.
support::Digest sha256_of_file(const std::filesystem::path& path);

}  // namespace hpctrain::ckpt_file
