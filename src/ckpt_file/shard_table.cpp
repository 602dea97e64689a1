#include "ckpt_file/shard_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "ckpt_file/checkpoint_error.h"
#include "support/bounded_file.h"
#include "support/input_file.h"

namespace hpctrain::ckpt_file {

std::filesystem::path shard_directory(const std::filesystem::path& index) {
  std::filesystem::path dir = index;
  return dir.replace_extension(".shards");
}

std::string shard_file_name(std::int64_t shard) { return fmt::format("rank-{:05}.h5", shard); }

std::string format_shard_table(const std::vector<ShardEntry>& shards) {
  std::string text;
  for (const auto& s : shards) text += fmt::format("{} {} {}\n", s.file, s.bytes, s.sha256);
  return text;
}

std::vector<ShardEntry> parse_shard_table(const std::string& text, std::int64_t count, const std::string& file) {
  std::vector<ShardEntry> table;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto where = fmt::format("{}: attribute {} line {}", file, kShardFilesAttribute, table.size() + 1);
    if (static_cast<std::int64_t>(table.size()) == count)
      throw CheckpointError(where + ": more shards than " + std::to_string(count));
    std::istringstream fields(line);
    ShardEntry entry;
    std::string rest;
    if (!(fields >> entry.file >> entry.bytes >> entry.sha256) || (fields >> rest)) {
      throw CheckpointError(where + ": not 'FILE BYTES SHA256'");
    }
    if (entry.file != shard_file_name(static_cast<std::int64_t>(table.size()))) {
      throw CheckpointError(fmt::format("{}: names '{}', not {}", where, entry.file,
                                        shard_file_name(static_cast<std::int64_t>(table.size()))));
    }
    if (entry.sha256.size() != 64 || !std::all_of(entry.sha256.begin(), entry.sha256.end(), [](char c) {
          return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        })) {
      throw CheckpointError(where + ": the digest is not 64 hex digits");
    }
    table.push_back(std::move(entry));
  }
  if (static_cast<std::int64_t>(table.size()) != count) {
    throw CheckpointError(fmt::format("{}: attribute {} lists {} shards, attribute {} says {}", file,
                                      kShardFilesAttribute, table.size(), kShardsAttribute, count));
  }
  return table;
}

support::Digest sha256_of_file(const std::filesystem::path& path) {
  try {
    // A regular file only, opened without blocking: a FIFO planted as a shard
    // must not stop verification or a writer.
    const support::InputFile in(path, "shard");
    support::Sha256 hash;
    constexpr std::size_t kBlock = std::size_t{1} << 20;
    for (std::uint64_t at = 0;;) {
      const std::string block = in.read_at(at, kBlock);
      if (block.empty()) break;
      hash.update(block);
      at += block.size();
    }
    return hash.finish();
  } catch (const support::InputError& e) {
    throw CheckpointError(e.what());
  }
}

}  // namespace hpctrain::ckpt_file
