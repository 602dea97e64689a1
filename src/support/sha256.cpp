#include "support/sha256.h"

#include <openssl/evp.h>

#include <stdexcept>

namespace hpctrain::support {

struct Sha256::Context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~Context() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : context_(std::make_unique<Context>()) {
  if (context_->ctx == nullptr || EVP_DigestInit_ex(context_->ctx, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
  }
}

Sha256::~Sha256() = default;

Sha256& Sha256::update(std::string_view bytes) {
  if (EVP_DigestUpdate(context_->ctx, bytes.data(), bytes.size()) != 1) {
    throw std::runtime_error("OpenSSL: SHA-256 update failed");
  }
  return *this;
}

Digest Sha256::finish() {
  Digest digest{};
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(context_->ctx, digest.data(), &length) != 1 || length != digest.size()) {
    throw std::runtime_error("OpenSSL: SHA-256 final failed");
  }
  return digest;
}

Digest sha256(std::string_view bytes) { return Sha256().update(bytes).finish(); }

std::string to_hex(const Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (const std::uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 0xF];
  }
  return out;
}

std::uint64_t leading_u64(const Digest& digest) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | digest[static_cast<std::size_t>(i)];
  return v;
}

}  // namespace hpctrain::support
