#include "data/token_dataset.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "data/data_error.h"
#include "data/token_shards.h"

namespace hpctrain::data {

TokenDataset::TokenDataset(const std::filesystem::path& dir, const std::string& split, std::size_t seq_len,
                           const std::string& expected_tokenizer_hash)
    : seq_len_(seq_len) {
  const auto meta_path = dir / "meta.json";
  std::ifstream in(meta_path);
  if (!in) throw DataError(fmt::format("{}: no prepared data set (run hpctrain prepare)", meta_path.string()));
  nlohmann::json meta;
  try {
    meta = nlohmann::json::parse(in);
    if (meta.at("format_version").get<int>() != kDataFormatVersion) {
      throw DataError(fmt::format("{}: data format version {} is not {} (prepare it again)", meta_path.string(),
                                  meta.at("format_version").get<int>(), kDataFormatVersion));
    }
    token_bytes_ = meta.at("token_bytes");
    vocab_size_ = meta.at("vocab_size");
    tokenizer_hash_ = meta.at("tokenizer_hash");
    unigram_entropy_ = meta.at("stats").value("unigram_entropy", 0.0);
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("{}: malformed: {}", meta_path.string(), e.what()));
  }
  if (!expected_tokenizer_hash.empty() && expected_tokenizer_hash != tokenizer_hash_) {
    throw DataError(
        fmt::format("{}: shards were made with tokenizer {}, but this run uses tokenizer {}; prepare the "
                    "data again with the same tokenizer",
                    dir.string(), tokenizer_hash_, expected_tokenizer_hash));
  }
  if (!meta["splits"].contains(split)) throw DataError(fmt::format("{}: no split '{}'", meta_path.string(), split));

  for (const auto& entry : meta["splits"][split]["shards"]) {
    const auto path = dir / entry.at("file").get<std::string>();
    const std::uint64_t tokens = entry.at("tokens");
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw DataError(fmt::format("{}: missing shard", path.string()));
    struct stat st {};
    fstat(fd, &st);
    const auto bytes = static_cast<std::size_t>(st.st_size);
    if (bytes != tokens * static_cast<std::uint64_t>(token_bytes_)) {
      close(fd);
      throw DataError(fmt::format("{}: {} bytes, but meta.json records {} tokens of {} bytes (truncated?)",
                                  path.string(), bytes, tokens, token_bytes_));
    }
    Shard shard;
    if (bytes > 0) {
      void* p = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        close(fd);
        throw DataError(fmt::format("{}: mmap failed", path.string()));
      }
      madvise(p, bytes, MADV_RANDOM);
      shard.data = static_cast<const unsigned char*>(p);
    }
    close(fd);
    shard.bytes = bytes;
    shard.samples = tokens > seq_len_ ? (tokens - 1) / seq_len_ : 0;
    shard.first_sample = total_samples_;
    total_samples_ += shard.samples;
    shards_.push_back(shard);
  }
}

TokenDataset::~TokenDataset() {
  for (const auto& s : shards_) {
    if (s.data != nullptr) munmap(const_cast<unsigned char*>(s.data), s.bytes);
  }
}

void TokenDataset::read(std::size_t index, std::int64_t* out) const {
  if (index >= total_samples_) {
    throw DataError(fmt::format("sample {} is past the end of the split ({} samples)", index, total_samples_));
  }
  const auto it = std::upper_bound(shards_.begin(), shards_.end(), index,
                                   [](std::size_t i, const Shard& s) { return i < s.first_sample; }) -
                  1;
  const std::size_t first_token = (index - it->first_sample) * seq_len_;
  const unsigned char* p = it->data + first_token * static_cast<std::size_t>(token_bytes_);
  if (token_bytes_ == 2) {
    for (std::size_t i = 0; i <= seq_len_; ++i) out[i] = p[2 * i] | (p[2 * i + 1] << 8);
  } else {
    for (std::size_t i = 0; i <= seq_len_; ++i) {
      out[i] = static_cast<std::int64_t>(p[4 * i] | (p[4 * i + 1] << 8) | (p[4 * i + 2] << 16) |
                                         (static_cast<std::uint32_t>(p[4 * i + 3]) << 24));
    }
  }
}

}  // namespace hpctrain::data
