#include "data/token_shards.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "data/data_error.h"

namespace hpctrain::data {

ShardWriter::ShardWriter(std::filesystem::path dir, std::string split, int token_bytes, std::uint64_t max_tokens)
    : dir_(std::move(dir)), split_(std::move(split)), token_bytes_(token_bytes), max_tokens_(max_tokens) {}

ShardWriter::~ShardWriter() {
  if (file_ != nullptr) (void)std::fclose(file_);
}

void ShardWriter::open_next() {
  const std::string name = fmt::format("{}-{:03}.bin", split_, info_.shards.size());
  const auto path = dir_ / name;
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) throw DataError(fmt::format("{}: cannot create", path.string()));
  info_.shards.push_back({name, 0});
}

void ShardWriter::close_current() {
  if (file_ == nullptr) return;
  const bool ok = std::fflush(file_) == 0 && fsync(fileno(file_)) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!ok || !closed) throw DataError(fmt::format("{}: write failed", (dir_ / info_.shards.back().file).string()));
}

void ShardWriter::append(const std::vector<int>& tokens) {
  std::size_t next = 0;
  while (next < tokens.size()) {
    if (file_ == nullptr || info_.shards.back().tokens == max_tokens_) {
      close_current();
      open_next();
    }
    const std::size_t take = std::min<std::size_t>(tokens.size() - next, max_tokens_ - info_.shards.back().tokens);
    buffer_.resize(take * static_cast<std::size_t>(token_bytes_));
    for (std::size_t i = 0; i < take; ++i) {
      auto v = static_cast<std::uint32_t>(tokens[next + i]);
      for (int b = 0; b < token_bytes_; ++b, v >>= 8) {
        buffer_[i * static_cast<std::size_t>(token_bytes_) + static_cast<std::size_t>(b)] =
            static_cast<unsigned char>(v & 0xFFU);
      }
    }
    if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
      throw DataError(fmt::format("{}: write failed", (dir_ / info_.shards.back().file).string()));
    }
    info_.shards.back().tokens += take;
    info_.tokens += take;
    next += take;
  }
}

SplitInfo ShardWriter::finish(std::uint64_t documents) {
  close_current();
  info_.documents = documents;
  return info_;
}

}  // namespace hpctrain::data
