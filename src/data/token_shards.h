// The prepared data set on disk (docs/data.md):
//   DIR/meta.json         format, fingerprint, tokenizer hash, splits, statistics
//   DIR/tokenizer.model   the SentencePiece model the tokens came from
//   DIR/<split>-NNN.bin   packed tokens, little-endian uint16 (uint32 past 65536 pieces)
// Documents are joined with </s> and packed with no padding.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hpctrain::data {

constexpr int kDataFormatVersion = 2;

struct ShardInfo {
  std::string file;  // relative to the data set directory
  std::uint64_t tokens = 0;
};

struct SplitInfo {
  std::uint64_t documents = 0;
  std::uint64_t tokens = 0;
  std::vector<ShardInfo> shards;
};

// Writes one split's token stream into shards of at most `max_tokens` tokens.
class ShardWriter {
 public:
  ShardWriter(std::filesystem::path dir, std::string split, int token_bytes, std::uint64_t max_tokens);
  ~ShardWriter();
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  void append(const std::vector<int>& tokens);
  // Flushes and fsyncs every shard; returns what was written.
  SplitInfo finish(std::uint64_t documents);

 private:
  void open_next();
  void close_current();

  std::filesystem::path dir_;
  std::string split_;
  int token_bytes_;
  std::uint64_t max_tokens_;
  std::FILE* file_ = nullptr;
  SplitInfo info_;
  std::vector<unsigned char> buffer_;
};

}  // namespace hpctrain::data
