#include "support/no_follow.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace hpctrain::support {
namespace {

std::string reason(int error) { return std::system_category().message(error); }

}  // namespace

OwnedFd::~OwnedFd() {
  if (fd_ >= 0) ::close(fd_);
}

OwnedFd& OwnedFd::operator=(OwnedFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

void OwnedFd::close(const std::string& name) {
  const int fd = fd_;
  fd_ = -1;
  if (fd >= 0 && ::close(fd) != 0) throw std::runtime_error(fmt::format("{}: close failed: {}", name, reason(errno)));
}

OwnedFd create_new_file(const std::filesystem::path& path, const std::string& what) {
  // O_EXCL with O_CREAT fails on any existing name, a link included, dangling
  // or not; O_NOFOLLOW says the same for kernels and file systems that differ.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int error = errno;
    throw std::runtime_error(fmt::format("{}: cannot create the {}: {}{}", path.string(), what, reason(error),
                                         error == EEXIST ? fmt::format(" ({} stands there)", what_is_at(path)) : ""));
  }
  return OwnedFd(fd);
}

OwnedFd open_for_append(const std::filesystem::path& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int error = errno;
    // ENXIO: a FIFO without a reader (a non-blocking open for writing).
    if (error == ENXIO)
      throw std::runtime_error(fmt::format("{}: not a regular file, so not a {}", path.string(), what));
    throw std::runtime_error(fmt::format("{}: cannot open the {} to append: {}", path.string(), what,
                                         error == ELOOP ? "a symbolic link stands there" : reason(error)));
  }
  OwnedFd owned(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw std::runtime_error(fmt::format("{}: not a regular file, so not a {}", path.string(), what));
  }
  (void)::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return owned;
}

void write_all(int fd, const void* data, std::size_t size, const std::string& name) {
  const char* at = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(fmt::format("{}: write failed: {}", name, reason(n < 0 ? errno : EIO)));
    at += n;
    size -= static_cast<std::size_t>(n);
  }
}

void make_real_directory(const std::filesystem::path& path, const std::string& what) {
  if (::mkdir(path.c_str(), 0777) == 0) return;
  const int error = errno;
  if (error == EEXIST && file_kind_at(path) == FileKind::kDirectory) return;
  throw std::runtime_error(fmt::format("{}: cannot make the {} there: {}", path.string(), what,
                                       error == EEXIST ? what_is_at(path) + " stands there" : reason(error)));
}

namespace {

// Calls `make` on `stem`, `stem`-1, `stem`-2, ... until it makes something new
// there (it returns false where a name is taken, and throws on other errors).
template <typename Make>
std::filesystem::path first_free_name(const std::filesystem::path& stem, const std::string& what, Make make) {
  for (int attempt = 0; attempt < 1000; ++attempt) {
    std::filesystem::path path = attempt == 0 ? stem.string() : stem.string() + fmt::format("-{}", attempt);
    if (make(path)) return path;
  }
  throw std::runtime_error(fmt::format("{}: cannot make the {}: 1000 names taken", stem.string(), what));
}

}  // namespace

std::filesystem::path make_new_directory(const std::filesystem::path& stem, const std::string& what) {
  return first_free_name(stem, what, [&](const std::filesystem::path& path) {
    if (::mkdir(path.c_str(), 0777) == 0) return true;
    if (errno == EEXIST) return false;
    throw std::runtime_error(fmt::format("{}: cannot make the {}: {}", path.string(), what, reason(errno)));
  });
}

std::pair<std::filesystem::path, OwnedFd> create_new_file_like(const std::filesystem::path& stem,
                                                               const std::string& what) {
  int fd = -1;
  std::filesystem::path path = first_free_name(stem, what, [&](const std::filesystem::path& candidate) {
    fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) return true;
    if (errno == EEXIST) return false;
    throw std::runtime_error(fmt::format("{}: cannot create the {}: {}", candidate.string(), what, reason(errno)));
  });
  return {std::move(path), OwnedFd(fd)};
}

FileKind file_kind_at(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return FileKind::kNothing;
  switch (st.st_mode & S_IFMT) {
    case S_IFREG: return FileKind::kRegular;
    case S_IFDIR: return FileKind::kDirectory;
    case S_IFLNK: return FileKind::kLink;
    case S_IFIFO: return FileKind::kFifo;
    case S_IFSOCK: return FileKind::kSocket;
    case S_IFCHR: return FileKind::kCharDevice;
    case S_IFBLK: return FileKind::kBlockDevice;
    default: return FileKind::kOther;
  }
}

std::string describe(FileKind kind) {
  switch (kind) {
    case FileKind::kNothing: return "nothing";
    case FileKind::kRegular: return "a regular file";
    case FileKind::kDirectory: return "a directory";
    case FileKind::kLink: return "a symbolic link";
    case FileKind::kFifo: return "a FIFO";
    case FileKind::kSocket: return "a socket";
    case FileKind::kCharDevice: return "a character device";
    case FileKind::kBlockDevice: return "a block device";
    case FileKind::kOther: return "something";
  }
  return "something";
}

std::string what_is_at(const std::filesystem::path& path) { return describe(file_kind_at(path)); }

bool rename_unless_taken(const std::filesystem::path& from, const std::filesystem::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return true;
  const int error = errno;
  if (error == EEXIST) return false;
  if (error != EINVAL && error != ENOSYS && error != ENOTSUP) {
    throw std::runtime_error(fmt::format("{}: cannot rename it to {}: {}", from.string(), to.string(), reason(error)));
  }
  if (file_kind_at(to) != FileKind::kNothing) return false;
  if (::rename(from.c_str(), to.c_str()) != 0) {
    throw std::runtime_error(fmt::format("{}: cannot rename it to {}: {}", from.string(), to.string(), reason(errno)));
  }
  return true;
}

}  // namespace hpctrain::support
