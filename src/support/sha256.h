// SHA-256 (OpenSSL) for content addressing: tokenizer and config hashes, data
// set fingerprints, duplicate detection.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace hpctrain::support {

using Digest = std::array<std::uint8_t, 32>;

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(std::string_view bytes);
  Digest finish();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

Digest sha256(std::string_view bytes);
std::string to_hex(const Digest& digest);
// The first 8 bytes as a number, for hash-based decisions (e.g. the split).
std::uint64_t leading_u64(const Digest& digest);

}  // namespace hpctrain::support
