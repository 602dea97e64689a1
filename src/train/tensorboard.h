// TensorBoard event files, written without TensorFlow: TFRecord framing
// (length, masked CRC32C of the length, payload, masked CRC32C of the payload)
// around hand-encoded Event protobufs holding scalar summaries. TensorBoard
// reads RUN_DIR/tensorboard/events.out.tfevents.<time>.<host>.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace hpctrain::train {

// CRC-32C (Castagnoli), as TFRecord uses it, and its masked form.
std::uint32_t crc32c(std::string_view bytes);
std::uint32_t masked_crc32c(std::string_view bytes);

class TensorBoardWriter {
 public:
  explicit TensorBoardWriter(const std::filesystem::path& dir);
  ~TensorBoardWriter();
  TensorBoardWriter(const TensorBoardWriter&) = delete;
  TensorBoardWriter& operator=(const TensorBoardWriter&) = delete;

  void scalar(const std::string& tag, std::int64_t step, double value);
  void flush();

  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  void write_record(const std::string& payload);

  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

}  // namespace hpctrain::train
