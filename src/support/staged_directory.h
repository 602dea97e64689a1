// A directory that readers must see whole or not at all (an exported model:
// its config.json and its weights belong together). It is built in a staging
// directory beside its destination, then moved into place in one rename
// under a lock, replacing what stood there only when the caller agrees. A
// failure anywhere leaves the destination as it was and removes the staging
// directory, which hpctrain made. Readers that take the same lock shared
// (read_lock) never read half of one directory and half of another.
#pragma once

#include <filesystem>
#include <functional>
#include <set>
#include <string>

#include "support/no_follow.h"

namespace hpctrain::support {

// The lock file that guards `destination`: PARENT/.NAME.lock, created (never
// through a link) and kept, since removing a lock file races with its takers.
std::filesystem::path lock_file_of(const std::filesystem::path& destination);

// An flock held until destruction: exclusive for a writer, shared for a reader.
class DirectoryLock {
 public:
  enum class Mode { kShared, kExclusive };
  DirectoryLock(const std::filesystem::path& destination, Mode mode);
  // A reader's lock, or none where no writer ever made the lock file (a
  // directory that was never installed by hpctrain, a read-only one).
  static DirectoryLock read_lock(const std::filesystem::path& destination);

 private:
  explicit DirectoryLock(OwnedFd fd) : fd_(std::move(fd)) {}
  OwnedFd fd_;
};

class StagedDirectory {
 public:
  // Makes PARENT/.NAME.staging (or -1, -2, ...); the parent must exist.
  StagedDirectory(std::filesystem::path destination, std::string what);
  ~StagedDirectory();
  StagedDirectory(const StagedDirectory&) = delete;
  StagedDirectory& operator=(const StagedDirectory&) = delete;

  [[nodiscard]] const std::filesystem::path& path() const { return staging_; }
  // A file the caller wrote into path(): removed with it on failure.
  void wrote(const std::string& name) { written_.insert(name); }

  // Moves the staging directory to the destination, under the exclusive
  // lock. Where a directory stands there, `replaceable` is asked first (under
  // the lock) and throws to refuse; it then swaps places with the new one and
  // its entries named in `old_files` are removed, and the directory too when
  // that leaves it empty. Returns what became of the old one ("" when none).
  std::string install(const std::function<void(const std::filesystem::path&)>& replaceable,
                      const std::set<std::string>& old_files);

 private:
  void remove_staging() noexcept;

  std::filesystem::path destination_;
  std::string what_;
  std::filesystem::path staging_;
  std::set<std::string> written_;
  bool installed_ = false;
};

}  // namespace hpctrain::support
