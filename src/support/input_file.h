// A file from outside, opened for reading only when it is a regular file. The
// open does not block (a FIFO would wait for a writer for ever, a device
// never end), and the check is made on the opened descriptor itself, so no
// rename between a check and the open can swap in something else.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace hpctrain::support {

class InputFile {
 public:
  // Throws InputError "PATH: no such WHAT" or "PATH: not a regular file, so
  // not a WHAT" (a directory, FIFO, socket or device).
  InputFile(const std::filesystem::path& path, const std::string& what);
  // As above, but nothing when the path does not exist.
  static std::optional<InputFile> open_if_present(const std::filesystem::path& path, const std::string& what);
  ~InputFile();
  InputFile(InputFile&& other) noexcept;
  InputFile& operator=(InputFile&& other) noexcept;
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  // The size now (the file may grow while it is read: a log, metrics).
  [[nodiscard]] std::uint64_t size() const;
  // Up to `bytes` bytes from `offset`; fewer at the end of the file.
  [[nodiscard]] std::string read_at(std::uint64_t offset, std::size_t bytes) const;
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  InputFile(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  int fd_ = -1;
  std::string name_;
};

}  // namespace hpctrain::support
