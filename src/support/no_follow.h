// Writing into directories that others may write too (a group-shared project
// directory): a new file is created exclusively and never through a symbolic
// link, a directory hpctrain writes into must be a real directory, and a file
// is moved into place only where nothing of another kind stands. So whoever
// can write to a run's directories can make a write fail, but cannot make it
// truncate or replace a file elsewhere (docs/security.md).
#pragma once

#include <filesystem>
#include <string>
#include <utility>

namespace hpctrain::support {

// A file descriptor closed when it goes out of scope.
class OwnedFd {
 public:
  explicit OwnedFd(int fd) : fd_(fd) {}
  ~OwnedFd();
  OwnedFd(OwnedFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OwnedFd& operator=(OwnedFd&& other) noexcept;
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  // Gives the descriptor up (to fdopen): the caller closes it.
  [[nodiscard]] int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes now, reporting a failed close (an NFS write error shows there).
  void close(const std::string& name);

 private:
  int fd_;
};

// Creates `path`, which must not exist (not even as a dangling link), for
// writing; throws "PATH: cannot create it: REASON" naming `what`.
OwnedFd create_new_file(const std::filesystem::path& path, const std::string& what);

// A new file `stem`, or `stem`-1, `stem`-2, ... where something stands:
// never one that was there before. Returns its path and descriptor.
std::pair<std::filesystem::path, OwnedFd> create_new_file_like(const std::filesystem::path& stem,
                                                               const std::string& what);

// Opens `path` for appending, creating it if absent: a regular file, never
// through a link (O_NOFOLLOW) and never a FIFO or device (checked on the
// descriptor, opened without blocking); throws naming `what` otherwise.
OwnedFd open_for_append(const std::filesystem::path& path, const std::string& what);

// Writes all of `size` bytes to `fd`; throws naming `name` on failure.
void write_all(int fd, const void* data, std::size_t size, const std::string& name);

// Makes `path` a directory unless it is one already; throws when it exists as
// anything else, a symbolic link to a directory included.
void make_real_directory(const std::filesystem::path& path, const std::string& what);
// Makes a new directory `stem`, or `stem`-1, `stem`-2, ... where one exists:
// never one that was there before. Returns its path.
std::filesystem::path make_new_directory(const std::filesystem::path& stem, const std::string& what);

// What stands at `path`, seen without following a link.
enum class FileKind { kNothing, kRegular, kDirectory, kLink, kFifo, kSocket, kCharDevice, kBlockDevice, kOther };
FileKind file_kind_at(const std::filesystem::path& path);
// The same in words, for messages: "nothing", "a regular file", "a
// directory", "a symbolic link", "a FIFO", ...
std::string describe(FileKind kind);
std::string what_is_at(const std::filesystem::path& path);

// Renames `from` to `to` unless something exists at `to`; returns false then.
// Where the file system cannot say so atomically (NFS and others refuse
// RENAME_NOREPLACE), it looks first and renames after.
bool rename_unless_taken(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace hpctrain::support
