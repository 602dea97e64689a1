#include "support/input_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "support/bounded_file.h"

namespace hpctrain::support {
namespace {

// -1 with errno ENOENT when absent; throws for anything but a regular file.
int open_regular(const std::filesystem::path& path, const std::string& what) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return -1;
    throw InputError(
        fmt::format("{}: cannot open the {}: {}", path.string(), what, std::system_category().message(error)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw InputError(fmt::format("{}: not a regular file, so not a {}", path.string(), what));
  }
  // Reads of a regular file never block; clear the flag all the same.
  (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

}  // namespace

InputFile::InputFile(const std::filesystem::path& path, const std::string& what) : name_(path.string()) {
  fd_ = open_regular(path, what);
  if (fd_ < 0) throw InputError(fmt::format("{}: no such {}", path.string(), what));
}

std::optional<InputFile> InputFile::open_if_present(const std::filesystem::path& path, const std::string& what) {
  const int fd = open_regular(path, what);
  if (fd < 0) return std::nullopt;
  return InputFile(fd, path.string());
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

InputFile::InputFile(InputFile&& other) noexcept : fd_(other.fd_), name_(std::move(other.name_)) { other.fd_ = -1; }

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    name_ = std::move(other.name_);
    other.fd_ = -1;
  }
  return *this;
}

std::uint64_t InputFile::size() const {
  struct stat st {};
  if (::fstat(fd_, &st) != 0) throw InputError(fmt::format("{}: cannot read its size", name_));
  return static_cast<std::uint64_t>(st.st_size);
}

std::string InputFile::read_at(std::uint64_t offset, std::size_t bytes) const {
  std::string out(bytes, '\0');
  std::size_t done = 0;
  while (done < bytes) {
    const ssize_t n = ::pread(fd_, out.data() + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(fmt::format("{}: read failed: {}", name_, std::system_category().message(errno)));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  out.resize(done);
  return out;
}

}  // namespace hpctrain::support
