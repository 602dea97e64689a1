// Read access to one split of a prepared data set: the shards are read sample
// by sample with pread (never whole into RAM, never mapped: a shard cut short
// under a running job is an error naming it, not SIGBUS) and cut into fixed-length samples of seq_len + 1
// tokens: sample i of a shard covers tokens [i*seq_len, i*seq_len + seq_len], so
// consecutive samples share one boundary token and inputs/targets are the sample
// shifted by one. Samples never span two shards.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/no_follow.h"

namespace hpctrain::data {

class TokenDataset {
 public:
  // Throws DataError naming the file when meta.json is missing, malformed or
  // implausible (token width, vocabulary, shard names and sizes are checked;
  // the data set may come from elsewhere), a shard is missing, not a regular
  // file or of the wrong size, or `expected_tokenizer_hash` (when not empty)
  // differs.
  TokenDataset(const std::filesystem::path& dir, const std::string& split, std::size_t seq_len,
               const std::string& expected_tokenizer_hash = {});
  ~TokenDataset();
  TokenDataset(const TokenDataset&) = delete;
  TokenDataset& operator=(const TokenDataset&) = delete;

  [[nodiscard]] std::size_t size() const { return total_samples_; }  // samples
  [[nodiscard]] std::size_t seq_len() const { return seq_len_; }
  [[nodiscard]] const std::string& split() const { return split_; }
  [[nodiscard]] int vocab_size() const { return vocab_size_; }
  [[nodiscard]] const std::string& tokenizer_hash() const { return tokenizer_hash_; }
  // Of the training split's tokens (prepare's statistics), in nats.
  [[nodiscard]] double unigram_entropy() const { return unigram_entropy_; }

  // Writes the seq_len + 1 tokens of sample `index` to `out`; throws
  // DataError for a token outside the vocabulary.
  void read(std::size_t index, std::int64_t* out) const;

 private:
  struct Shard {
    support::OwnedFd fd{-1};
    std::string path;
    std::size_t bytes = 0;
    std::size_t samples = 0;
    std::size_t first_sample = 0;
  };
  // `size` bytes of `shard` from `offset`; DataError naming the shard when it
  // has become shorter than when it was opened.
  void read_bytes(const Shard& shard, std::size_t offset, std::size_t size, unsigned char* out) const;

  std::vector<Shard> shards_;
  std::string split_;
  std::size_t seq_len_;
  std::size_t total_samples_ = 0;
  int token_bytes_ = 2;
  int vocab_size_ = 0;
  std::string tokenizer_hash_;
  double unigram_entropy_ = 0;
};

}  // namespace hpctrain::data
