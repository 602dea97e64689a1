#include "ckpt_file/checkpoint_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/hdf5_file.h"
#include "ckpt_file/shard_table.h"
#include "support/in_child.h"
#include "support/no_follow.h"
#include "support/writer_pid.h"

namespace hpctrain::ckpt_file {
namespace {

constexpr std::size_t kMaxStepDigits = 18;  // below 2^63

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// rank-RRRRR.h5 (five digits or more), or its temporary
// rank-RRRRR.h5.tmp-PID: the only names a shard directory holds that hpctrain
// wrote.
bool is_shard_name(const std::string& name) {
  const auto dot = name.find('.');
  if (name.rfind("rank-", 0) != 0 || dot == std::string::npos || dot < 10 || !all_digits(name.substr(5, dot - 5))) {
    return false;
  }
  const std::string rest = name.substr(dot);
  return rest == ".h5" || (rest.rfind(".h5.tmp-", 0) == 0 && all_digits(rest.substr(8)));
}

// The step of "step-N.shards" named as hpctrain names a checkpoint's shards.
std::optional<std::int64_t> shards_step(const std::string& name) {
  const std::string suffix = ".shards";
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return std::nullopt;
  }
  return checkpoint_step(name.substr(0, name.size() - suffix.size()) + ".h5");
}

bool is_link(const std::filesystem::directory_entry& entry) {
  std::error_code ec;
  return entry.is_symlink(ec) || ec;
}

std::string utc_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour,
                     utc.tm_min, utc.tm_sec);
}

}  // namespace

std::vector<std::filesystem::path> remove_shards(const std::filesystem::path& shard_dir) {
  std::vector<std::filesystem::path> removed;
  // Everything relative to the directory opened once, without following a
  // link: a shard directory swapped for a link after a check would otherwise
  // make the deletions below happen wherever the link points.
  const int fd = ::open(shard_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return removed;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return removed;
  }
  std::vector<std::string> names;
  // NOLINTNEXTLINE(concurrency-mt-unsafe): the stream is this call's own; glibc's readdir is safe then
  while (const dirent* entry = ::readdir(dir)) {
    if (is_shard_name(entry->d_name)) names.emplace_back(entry->d_name);
  }
  for (const auto& name : names) {
    struct stat st {};
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        ::unlinkat(fd, name.c_str(), 0) == 0) {
      removed.push_back(shard_dir / name);
    }
  }
  ::closedir(dir);                   // closes fd
  (void)::rmdir(shard_dir.c_str());  // only when nothing else is left in it; never through a link
  return removed;
}

std::string checkpoint_file_name(std::int64_t step) { return fmt::format("step-{:08}.h5", step); }

std::optional<std::int64_t> checkpoint_step(const std::string& file_name) {
  if (file_name.size() < 16 || file_name.rfind("step-", 0) != 0 ||
      file_name.compare(file_name.size() - 3, 3, ".h5") != 0) {
    return std::nullopt;
  }
  const std::string digits = file_name.substr(5, file_name.size() - 8);
  if (digits.size() > kMaxStepDigits || !all_digits(digits)) return std::nullopt;
  const std::int64_t step = std::stoll(digits);
  if (checkpoint_file_name(step) != file_name) return std::nullopt;  // step-000000001.h5, step-1.h5: not ours
  return step;
}

std::filesystem::path temporary_name(const std::filesystem::path& path) {
  return path.string() + fmt::format(".tmp-{}", getpid());
}

std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& dir) {
  std::vector<std::pair<std::int64_t, std::filesystem::path>> found;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return {};
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto step = checkpoint_step(entry.path().filename().string());
    if (step && entry.is_regular_file(ec)) found.emplace_back(*step, entry.path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::filesystem::path> paths;
  paths.reserve(found.size());
  for (auto& [step, path] : found) paths.push_back(std::move(path));
  return paths;
}

std::filesystem::path find_checkpoint(const std::filesystem::path& run_dir_or_file) {
  if (std::filesystem::is_regular_file(run_dir_or_file)) return run_dir_or_file;
  const auto found = list_checkpoints(run_dir_or_file / "checkpoints");
  if (found.empty()) {
    throw CheckpointError(
        fmt::format("{}: no checkpoint (expected a .h5 file, or a run directory with checkpoints/step-*.h5)",
                    run_dir_or_file.string()));
  }
  return found.front();
}

bool written_by_hpctrain(const std::filesystem::path& path, std::int64_t step) {
  if (support::file_kind_at(path) != support::FileKind::kRegular) return false;
  try {
    const support::ChildResult child =
        support::run_in_child([&] { return Hdf5Reader(path).int_attribute("step") == step ? "yes" : "no"; });
    return child.output && *child.output == "yes";
  } catch (const std::exception&) {
    return false;  // no child process (fork refused): cannot tell, so not ours to delete
  }
}

Pruning prune_checkpoints(const std::filesystem::path& dir, std::int64_t keep, const std::filesystem::path& written,
                          const std::filesystem::path& kept) {
  Pruning pruning;
  if (keep <= 0) return pruning;
  const auto written_step = checkpoint_step(written.filename().string());
  if (!written_step) throw CheckpointError(fmt::format("{}: not a checkpoint's name", written.string()));
  std::int64_t counted = 0;
  for (const auto& path : list_checkpoints(dir)) {
    const std::string name = path.filename().string();
    const std::int64_t step = *checkpoint_step(name);
    if (step > *written_step) continue;  // another history's: set_aside_after's
    const bool best = !kept.empty() && name == kept.filename().string();
    if (name == written.filename().string() || best) {
      ++counted;
      continue;
    }
    if (!written_by_hpctrain(path, step)) {
      pruning.left_alone.push_back(
          fmt::format("{}: not a checkpoint hpctrain wrote for step {} ({}, or its step "
                      "attribute is another): left alone",
                      path.string(), step, support::what_is_at(path)));
      continue;
    }
    if (counted < keep) {
      ++counted;
      continue;
    }
    // A checkpoint that cannot be deleted (its directory's permissions) is
    // named, and costs the run nothing: the one just written is on disk.
    std::error_code ec;
    if (!std::filesystem::remove(path, ec) || ec) {
      pruning.left_alone.push_back(
          fmt::format("{}: cannot delete it ({}): left in place", path.string(), ec ? ec.message() : "gone"));
      continue;
    }
    pruning.removed.push_back(path);
    remove_shards(shard_directory(path));
  }
  return pruning;
}

std::vector<std::filesystem::path> remove_temporaries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return removed;
  const auto options = std::filesystem::directory_options::skip_permission_denied;
  std::vector<std::filesystem::path> shard_dirs;
  for (auto it = std::filesystem::directory_iterator(dir, options, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (const auto step = shards_step(name); step && !is_link(*it) && it->is_directory(ec)) {
      // Shards without their index: a sharded write that never finished
      // (the index is written last).
      if (!std::filesystem::exists(dir / checkpoint_file_name(*step), ec)) shard_dirs.push_back(it->path());
      continue;
    }
    const auto mark = name.find(".h5.tmp-");
    if (mark == std::string::npos || !checkpoint_step(name.substr(0, mark + 3))) continue;
    // A temporary of this process's own pid is stale: a run calls this before it writes anything.
    const auto pid = support::pid_in_name(name.substr(mark + 8));
    const bool writing = pid && *pid != getpid() && support::runs_on_this_host(*pid);
    if (pid && !writing && !is_link(*it) && support::file_kind_at(it->path()) == support::FileKind::kRegular &&
        std::filesystem::remove(it->path(), ec)) {
      removed.push_back(it->path());
    }
  }
  for (const auto& shards : shard_dirs) {
    for (auto& shard : remove_shards(shards)) removed.push_back(std::move(shard));
  }
  return removed;
}

void check_checkpoint_directory(const std::filesystem::path& dir) {
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISLNK(st.st_mode) || st.st_uid == ::geteuid()) return;
  throw CheckpointError(fmt::format(
      "{}: a symbolic link made by another user (uid {}, not {}): hpctrain would write, prune and move checkpoints "
      "wherever it points; remove it, or make the link yourself",
      dir.string(), st.st_uid, ::geteuid()));
}

SetAside set_aside_after(const std::filesystem::path& dir, std::int64_t from) {
  SetAside result;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return result;
  std::vector<std::filesystem::path> beyond;
  const auto options = std::filesystem::directory_options::skip_permission_denied;
  for (auto it = std::filesystem::directory_iterator(dir, options, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    auto step = checkpoint_step(name);
    if (!step) step = shards_step(name);
    if (step && *step > from) beyond.push_back(it->path());
  }
  if (beyond.empty()) return result;
  std::sort(beyond.begin(), beyond.end());
  // A new directory, never one that stood there under the name.
  result.into = support::make_new_directory(
      dir / fmt::format("superseded-from-step-{}-{}-{}", std::max<std::int64_t>(from, 0), utc_stamp(), getpid()),
      "directory of superseded checkpoints");
  for (const auto& path : beyond) {
    // A directory of another user's cannot be moved (it would need write
    // permission on it): it stays, named, and stops the run only at its step.
    try {
      if (support::rename_unless_taken(path, result.into / path.filename())) {
        result.moved.push_back(path);
        continue;
      }
      result.left.push_back(
          fmt::format("{}: cannot set it aside: its name is taken in {}", path.string(), result.into.string()));
    } catch (const std::exception& e) {
      result.left.push_back(e.what());
    }
  }
  return result;
}

}  // namespace hpctrain::ckpt_file
