#include "train/tensorboard.h"

#include "support/no_follow.h"

#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <climits>
#include <cstring>
#include <stdexcept>

namespace hpctrain::train {
namespace {

constexpr std::array<std::uint32_t, 256> kCrcTable = [] {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0x82F63B78U ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}();

// Protobuf wire format, just the pieces an Event with scalars needs.
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

template <typename T>
void put_fixed(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // little-endian hosts only, like the format
  out.append(bytes, sizeof(T));
}

void put_bytes(std::string& out, int field, std::string_view bytes) {
  put_varint(out, (static_cast<std::uint64_t>(field) << 3) | 2);
  put_varint(out, bytes.size());
  out.append(bytes);
}

// Event { double wall_time = 1; int64 step = 2; file_version = 3 | summary = 5 }
std::string event_header(std::int64_t step) {
  std::string e;
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  put_varint(e, (1 << 3) | 1);
  put_fixed(e, now);
  put_varint(e, 2 << 3);
  put_varint(e, static_cast<std::uint64_t>(step));
  return e;
}

}  // namespace

std::uint32_t crc32c(std::string_view bytes) {
  std::uint32_t c = 0xFFFFFFFFU;
  for (const char b : bytes) c = kCrcTable[(c ^ static_cast<std::uint8_t>(b)) & 0xFFU] ^ (c >> 8);
  return c ^ 0xFFFFFFFFU;
}

std::uint32_t masked_crc32c(std::string_view bytes) {
  const std::uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xA282EAD8U;
}

TensorBoardWriter::TensorBoardWriter(const std::filesystem::path& dir) {
  support::make_real_directory(dir, "TensorBoard directory");
  char host[HOST_NAME_MAX + 1] = {};
  gethostname(host, sizeof host);
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  path_ = dir / fmt::format("events.out.tfevents.{}.{}", seconds, host);
  // Never through a link or into a FIFO: the run directory may be shared.
  const int fd = support::open_for_append(path_, "TensorBoard event file").release();
  file_ = fdopen(fd, "ab");
  if (file_ == nullptr) {
    ::close(fd);
    throw std::runtime_error(fmt::format("{}: cannot create", path_.string()));
  }
  std::string e = event_header(0);
  put_bytes(e, 3, "brain.Event:2");
  write_record(e);
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_ != nullptr) (void)std::fclose(file_);
}

void TensorBoardWriter::write_record(const std::string& payload) {
  std::string header;
  put_fixed<std::uint64_t>(header, payload.size());
  std::string record = header;
  put_fixed<std::uint32_t>(record, masked_crc32c(header));
  record += payload;
  put_fixed<std::uint32_t>(record, masked_crc32c(payload));
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size()) {
    throw std::runtime_error(fmt::format("{}: write failed", path_.string()));
  }
}

void TensorBoardWriter::scalar(const std::string& tag, std::int64_t step, double value) {
  // Summary.Value { string tag = 1; float simple_value = 2; }
  std::string v;
  put_bytes(v, 1, tag);
  put_varint(v, (2 << 3) | 5);
  put_fixed(v, static_cast<float>(value));
  std::string summary;
  put_bytes(summary, 1, v);  // Summary { repeated Value value = 1; }
  std::string e = event_header(step);
  put_bytes(e, 5, summary);
  write_record(e);
}

void TensorBoardWriter::flush() { (void)std::fflush(file_); }

}  // namespace hpctrain::train
