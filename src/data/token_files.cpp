#include "data/token_files.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include "data/data_error.h"

namespace hpctrain::data {
namespace {

std::uint32_t little_endian_u32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

}  // namespace

TokenFileReader::TokenFileReader(std::filesystem::path path, config::DataFormat format, std::int64_t vocab_size)
    : path_(std::move(path)), vocab_size_(vocab_size) {
  const std::string where = path_.string();
  // Opened before it is examined, and never blocking: a FIFO put where a file
  // was expected is refused, not waited on.
  const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw DataError(fmt::format("{}: cannot open", where));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    throw DataError(fmt::format("{}: not a regular file", where));
  }
  file_ = fdopen(fd, "rb");
  if (file_ == nullptr) {
    close(fd);
    throw DataError(fmt::format("{}: cannot open", where));
  }
  auto bytes = static_cast<std::uint64_t>(st.st_size);
  if (format == config::DataFormat::kLlmc) {
    std::array<unsigned char, kLlmcHeaderBytes> header{};
    if (bytes < kLlmcHeaderBytes || std::fread(header.data(), 1, header.size(), file_) != header.size()) {
      throw DataError(fmt::format("{}: {} bytes, shorter than llm.c's {}-byte header (data.format = \"llmc\")", where,
                                  bytes, kLlmcHeaderBytes));
    }
    const std::uint32_t magic = little_endian_u32(header.data());
    const std::uint32_t version = little_endian_u32(header.data() + 4);
    const std::uint32_t declared = little_endian_u32(header.data() + 8);
    if (magic != static_cast<std::uint32_t>(kLlmcMagic)) {
      throw DataError(
          fmt::format("{}: starts with {}, not llm.c's magic number {}: not an llm.c token file (for a "
                      "headerless token stream, data.format = \"uint16\" or \"uint32\")",
                      where, magic, kLlmcMagic));
    }
    if (version != 1 && version != 2) {
      throw DataError(fmt::format("{}: llm.c header version {}, not 1 (uint16 tokens) or 2 (uint32)", where, version));
    }
    token_bytes_ = version == 1 ? 2 : 4;
    bytes -= kLlmcHeaderBytes;
    if (bytes != static_cast<std::uint64_t>(declared) * static_cast<std::uint64_t>(token_bytes_)) {
      throw DataError(fmt::format("{}: the header declares {} tokens of {} bytes, but {} bytes follow it (truncated?)",
                                  where, declared, token_bytes_, bytes));
    }
  } else {
    token_bytes_ = format == config::DataFormat::kUint32 ? 4 : 2;
    if (bytes % static_cast<std::uint64_t>(token_bytes_) != 0) {
      throw DataError(fmt::format("{}: {} bytes is not a whole number of {}-byte tokens (data.format = \"{}\")", where,
                                  bytes, token_bytes_, config::name_of(format)));
    }
  }
  tokens_ = bytes / static_cast<std::uint64_t>(token_bytes_);
}

TokenFileReader::~TokenFileReader() {
  if (file_ != nullptr) (void)std::fclose(file_);
}

bool TokenFileReader::next(std::vector<int>& out, std::size_t max) {
  out.clear();
  const std::uint64_t count = std::min<std::uint64_t>(max, tokens_ - read_);
  if (count == 0) return false;
  buffer_.resize(static_cast<std::size_t>(count) * static_cast<std::size_t>(token_bytes_));
  if (std::fread(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size()) {
    throw DataError(
        fmt::format("{}: read failed after {} tokens (was it truncated while being read?)", path_.string(), read_));
  }
  out.resize(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const unsigned char* p = buffer_.data() + i * static_cast<std::size_t>(token_bytes_);
    const std::uint32_t token =
        token_bytes_ == 2 ? static_cast<std::uint32_t>(p[0] | (p[1] << 8)) : little_endian_u32(p);
    // Checked before the conversion: a uint32 token may not fit an int.
    if (token >= static_cast<std::uint64_t>(vocab_size_)) {
      throw DataError(
          fmt::format("{}: token {} at position {} is outside the vocabulary of {} (data.vocab_size: set it "
                      "to the tokenizer's size, e.g. 50257 for GPT-2's)",
                      path_.string(), token, read_ + i, vocab_size_));
    }
    out[i] = static_cast<int>(token);
  }
  read_ += count;
  return true;
}

}  // namespace hpctrain::data
