// Token files another tool wrote, read without their tokenizer: llm.c's .bin
// (a header of 256 little-endian int32: the magic 20240520, the version, 1 for
// uint16 tokens or 2 for uint32, and the token count; then the tokens) and
// headerless little-endian uint16 or uint32 streams (nanoGPT's train.bin and
// val.bin). The file is hostile until checked: the header, that its size is
// what the header (or the token width) says, and every token against the
// vocabulary, each error naming the file and the token's position.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "config/experiment.h"

namespace hpctrain::data {

constexpr std::int32_t kLlmcMagic = 20240520;
constexpr std::size_t kLlmcHeaderBytes = std::size_t{256} * 4;

class TokenFileReader {
 public:
  // Throws DataError when the file is no regular file, its header is not
  // llm.c's (format kLlmc), or its size does not hold whole tokens.
  TokenFileReader(std::filesystem::path path, config::DataFormat format, std::int64_t vocab_size);
  ~TokenFileReader();
  TokenFileReader(const TokenFileReader&) = delete;
  TokenFileReader& operator=(const TokenFileReader&) = delete;

  [[nodiscard]] std::uint64_t tokens() const { return tokens_; }
  [[nodiscard]] int token_bytes() const { return token_bytes_; }

  // The next at most `max` tokens into `out` (replaced); false when none are
  // left. Throws DataError for a token outside the vocabulary or a short read.
  bool next(std::vector<int>& out, std::size_t max);

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::int64_t vocab_size_;
  int token_bytes_ = 2;
  std::uint64_t tokens_ = 0;
  std::uint64_t read_ = 0;
  std::vector<unsigned char> buffer_;
};

}  // namespace hpctrain::data
