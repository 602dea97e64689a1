#include "support/staged_directory.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>  // renameat2
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace hpctrain::support {
namespace {

namespace fs = std::filesystem;

std::string failure_text(int error) { return std::system_category().message(error); }

fs::path parent_or_dot(const fs::path& p) { return p.parent_path().empty() ? fs::path(".") : p.parent_path(); }

// The parent's entry for the rename, on disk before the caller says "done".
void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

void take_lock(int fd, int operation, const fs::path& lock) {
  while (::flock(fd, operation) != 0) {
    if (errno != EINTR)
      throw std::runtime_error(fmt::format("{}: cannot lock it: {}", lock.string(), failure_text(errno)));
  }
}

}  // namespace

fs::path lock_file_of(const fs::path& destination) {
  fs::path dir = destination.lexically_normal();  // "model/" is "model"
  if (!dir.has_filename()) dir = dir.parent_path();
  return parent_or_dot(dir) / ("." + dir.filename().string() + ".lock");
}

DirectoryLock::DirectoryLock(const fs::path& destination, Mode mode) : fd_(-1) {
  const fs::path lock = lock_file_of(destination);
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int error = errno;
    throw std::runtime_error(fmt::format("{}: cannot open the lock of {}: {}", lock.string(), destination.string(),
                                         error == ELOOP ? "a symbolic link stands there" : failure_text(error)));
  }
  fd_ = OwnedFd(fd);
  take_lock(fd, mode == Mode::kShared ? LOCK_SH : LOCK_EX, lock);
}

DirectoryLock DirectoryLock::read_lock(const fs::path& destination) {
  const fs::path lock = lock_file_of(destination);
  const int fd = ::open(lock.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return DirectoryLock(OwnedFd(-1));
  take_lock(fd, LOCK_SH, lock);
  return DirectoryLock(OwnedFd(fd));
}

StagedDirectory::StagedDirectory(fs::path destination, std::string what)
    : destination_(std::move(destination)), what_(std::move(what)) {
  const fs::path parent = parent_or_dot(destination_);
  std::error_code ec;
  if (!fs::is_directory(parent, ec)) {
    throw std::runtime_error(fmt::format("{}: cannot write the {} there: its parent {} is not a directory",
                                         destination_.string(), what_, parent.string()));
  }
  staging_ = make_new_directory(parent / ("." + destination_.filename().string() + ".staging"), what_);
}

StagedDirectory::~StagedDirectory() {
  if (!installed_) remove_staging();
}

void StagedDirectory::remove_staging() noexcept {
  // Only what this object made: the files the caller wrote, then the directory.
  std::error_code ec;
  for (const auto& name : written_) fs::remove(staging_ / name, ec);
  fs::remove(staging_, ec);
}

std::string StagedDirectory::install(const std::function<void(const fs::path&)>& replaceable,
                                     const std::set<std::string>& old_files) {
  const DirectoryLock lock(destination_, DirectoryLock::Mode::kExclusive);
  const FileKind there = file_kind_at(destination_);
  if (there == FileKind::kNothing) {
    if (!rename_unless_taken(staging_, destination_)) {
      throw std::runtime_error(fmt::format("{}: appeared while the {} was written", destination_.string(), what_));
    }
    installed_ = true;
    sync_directory(parent_or_dot(destination_));
    return {};
  }
  if (there != FileKind::kDirectory) {
    throw std::runtime_error(fmt::format("{}: {} stands there; the {} is a directory (name a new one)",
                                         destination_.string(), describe(there), what_));
  }
  replaceable(destination_);
  // Swap the two in one step; where the file system cannot (NFS), move the
  // old one aside first: a reader without the lock then finds nothing for a
  // moment, never a mix.
  fs::path old = staging_;
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, destination_.c_str(), RENAME_EXCHANGE) != 0) {
    const int error = errno;
    if (error != EINVAL && error != ENOSYS && error != ENOTSUP) {
      throw std::runtime_error(
          fmt::format("{}: cannot move the new {} into place: {}", destination_.string(), what_, failure_text(error)));
    }
    old =
        make_new_directory(parent_or_dot(destination_) / ("." + destination_.filename().string() + ".replaced"), what_);
    fs::remove(old);
    if (!rename_unless_taken(destination_, old) || !rename_unless_taken(staging_, destination_)) {
      throw std::runtime_error(fmt::format("{}: cannot move the new {} into place", destination_.string(), what_));
    }
  }
  installed_ = true;
  sync_directory(parent_or_dot(destination_));
  std::error_code ec;
  for (const auto& name : old_files) fs::remove(old / name, ec);
  if (fs::remove(old, ec)) return "replaced the earlier one";
  return fmt::format("replaced the earlier one, kept at {} (it held files the {} does not write)", old.string(), what_);
}

}  // namespace hpctrain::support
