#include "data/token_dataset.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

#include "data/data_error.h"
#include "data/token_shards.h"
#include "support/bounded_file.h"

namespace hpctrain::data {

namespace {

constexpr std::size_t kMaxMetaBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxShards = 1 << 20;
constexpr std::uint64_t kMaxShardTokens = std::uint64_t{1} << 40;

// An integer field of meta.json within [min, max]; a float, a string or an
// out-of-range number is refused before any conversion.
std::int64_t integer_field(const nlohmann::json& object, const char* key, std::int64_t min, std::int64_t max,
                           const std::string& where) {
  const nlohmann::json& value = object.at(key);
  if (!value.is_number_integer() ||
      (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max)) ||
      (!value.is_number_unsigned() && (value.get<std::int64_t>() < min || value.get<std::int64_t>() > max))) {
    throw DataError(fmt::format("{}: {} is {}, not an integer in [{}, {}]", where, key, value.dump(), min, max));
  }
  return value.get<std::int64_t>();
}

// A shard name prepare could have written: no directory part, no hidden file.
bool plain_file_name(const std::string& name) {
  return !name.empty() && name.size() <= 255 && name[0] != '.' &&
         name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") ==
             std::string::npos;
}

}  // namespace

TokenDataset::TokenDataset(const std::filesystem::path& dir, const std::string& split, std::size_t seq_len,
                           const std::string& expected_tokenizer_hash)
    : split_(split), seq_len_(seq_len) {
  const auto meta_path = dir / "meta.json";
  const std::string where = meta_path.string();
  if (seq_len_ == 0) throw DataError(fmt::format("{}: a sequence length of 0", where));
  if (!std::filesystem::exists(meta_path)) {
    throw DataError(fmt::format("{}: no prepared data set (run hpctrain prepare)", where));
  }
  std::vector<std::pair<std::string, std::uint64_t>> shard_list;
  try {
    const nlohmann::json meta =
        nlohmann::json::parse(support::read_bounded_file(meta_path, kMaxMetaBytes, "meta.json"));
    if (!meta.is_object()) throw DataError(fmt::format("{}: not a JSON object", where));
    const auto version = integer_field(meta, "format_version", 0, 1 << 30, where);
    if (version != kDataFormatVersion) {
      throw DataError(
          fmt::format("{}: data format version {} is not {} (prepare it again)", where, version, kDataFormatVersion));
    }
    token_bytes_ = static_cast<int>(integer_field(meta, "token_bytes", 2, 4, where));
    vocab_size_ = static_cast<int>(integer_field(meta, "vocab_size", 1, 1 << 30, where));
    tokenizer_hash_ = meta.at("tokenizer_hash").get<std::string>();
    const auto& stats = meta.at("stats");
    const auto entropy = stats.is_object() ? stats.find("unigram_entropy") : stats.end();
    unigram_entropy_ = entropy != stats.end() && entropy->is_number() ? entropy->get<double>() : 0.0;
    if (token_bytes_ != 2 && token_bytes_ != 4) {
      throw DataError(fmt::format("{}: token_bytes is {}, not 2 or 4", where, token_bytes_));
    }
    if (token_bytes_ == 2 && vocab_size_ > 65536) {
      throw DataError(fmt::format("{}: vocab_size {} does not fit {}-byte tokens", where, vocab_size_, token_bytes_));
    }
    const auto& splits = meta.at("splits");
    if (!splits.is_object() || !splits.contains(split)) throw DataError(fmt::format("{}: no split '{}'", where, split));
    const auto& shards = splits.at(split).at("shards");
    if (!shards.is_array() || shards.size() > kMaxShards) {
      throw DataError(fmt::format("{}: split '{}' has no list of at most {} shards", where, split, kMaxShards));
    }
    for (const auto& entry : shards) {
      if (!entry.is_object()) throw DataError(fmt::format("{}: a shard entry is not an object", where));
      std::string file = entry.at("file").get<std::string>();
      const auto tokens = static_cast<std::uint64_t>(
          integer_field(entry, "tokens", 0, static_cast<std::int64_t>(kMaxShardTokens), where));
      if (!plain_file_name(file)) {
        throw DataError(fmt::format("{}: shard name '{}' is not a plain file name in the data set", where, file));
      }
      shard_list.emplace_back(std::move(file), tokens);
    }
  } catch (const nlohmann::json::exception& e) {
    throw DataError(fmt::format("{}: malformed: {}", where, e.what()));
  } catch (const support::InputError& e) {
    throw DataError(e.what());
  }
  if (!expected_tokenizer_hash.empty() && expected_tokenizer_hash != tokenizer_hash_) {
    throw DataError(
        fmt::format("{}: shards were made with tokenizer {}, but this run uses tokenizer {}; prepare the "
                    "data again with the same tokenizer",
                    dir.string(), tokenizer_hash_, expected_tokenizer_hash));
  }

  for (const auto& [file, tokens] : shard_list) {
    const auto path = dir / file;
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw DataError(
          fmt::format("{}: cannot open the shard: {}", path.string(), std::system_category().message(errno)));
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      throw DataError(fmt::format("{}: not a regular file", path.string()));
    }
    const auto bytes = static_cast<std::size_t>(st.st_size);
    // tokens <= 2^40 and token_bytes <= 4: the product cannot wrap.
    if (bytes != tokens * static_cast<std::uint64_t>(token_bytes_)) {
      close(fd);
      throw DataError(fmt::format("{}: {} bytes, but meta.json records {} tokens of {} bytes (truncated?)",
                                  path.string(), bytes, tokens, token_bytes_));
    }
    // Read with pread, not mapped: a shard cut short while the run trains
    // (`cp` over it truncates it first) is then a short read, an error naming
    // the shard, where a mapping would end the process with SIGBUS. The open
    // descriptor keeps reading the file the run started with if another is
    // renamed over it.
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);  // samples are drawn in random order
    Shard shard;
    shard.fd = support::OwnedFd(fd);
    shard.path = path.string();
    shard.bytes = bytes;
    shard.samples = tokens > seq_len_ ? (tokens - 1) / seq_len_ : 0;
    shard.first_sample = total_samples_;
    total_samples_ += shard.samples;
    shards_.push_back(std::move(shard));
  }
}

TokenDataset::~TokenDataset() = default;

void TokenDataset::read_bytes(const Shard& shard, std::size_t offset, std::size_t size, unsigned char* out) const {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(shard.fd.get(), out + done, size - done, static_cast<off_t>(offset + done));
    if (got > 0) {
      done += static_cast<std::size_t>(got);
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) {
      throw DataError(fmt::format(
          "{}: ends before byte {} of the {} it held when the run opened it (split '{}'): the shard was cut short "
          "or rewritten in place while the run read it; prepare the data set again, then resume the run",
          shard.path, offset + size, shard.bytes, split_));
    }
    throw DataError(fmt::format("{}: cannot read {} bytes at offset {}: {}", shard.path, size - done, offset + done,
                                std::system_category().message(errno)));
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
  std::vector<unsigned char> bytes((seq_len_ + 1) * static_cast<std::size_t>(token_bytes_));
  read_bytes(*it, first_token * static_cast<std::size_t>(token_bytes_), bytes.size(), bytes.data());
  const unsigned char* p = bytes.data();
  std::int64_t largest = 0;
  if (token_bytes_ == 2) {
    for (std::size_t i = 0; i <= seq_len_; ++i) {
      out[i] = p[2 * i] | (p[2 * i + 1] << 8);
      largest = std::max(largest, out[i]);
    }
  } else {
    for (std::size_t i = 0; i <= seq_len_; ++i) {
      out[i] = static_cast<std::int64_t>(p[4 * i] | (p[4 * i + 1] << 8) | (p[4 * i + 2] << 16) |
                                         (static_cast<std::uint32_t>(p[4 * i + 3]) << 24));
      largest = std::max(largest, out[i]);
    }
  }
  // A token the vocabulary lacks would index past the embedding table.
  if (largest >= vocab_size_) {
    throw DataError(fmt::format("split '{}', sample {}: token {} is outside the vocabulary of {}", split_, index,
                                largest, vocab_size_));
  }
}

}  // namespace hpctrain::data
