#include "ckpt_file/checkpoint_files.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/hdf5_file.h"
#include "ckpt_file/shard_table.h"
#include "support/in_child.h"
#include "support/no_follow.h"

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

// A lstat-regular file: not a link, a directory, a FIFO or a device.
bool plain_file(const std::filesystem::path& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Whether process `pid` may still be writing: it runs on this host and is not
// this process.
bool still_running(const std::string& pid_text) {
  if (pid_text.size() > 9) return false;  // no pid this long: not one of ours
  const auto pid = static_cast<pid_t>(std::stol(pid_text));
  if (pid == getpid() || pid <= 0) return false;
  return ::kill(pid, 0) == 0 || errno != ESRCH;
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
  std::error_code ec;
  if (!std::filesystem::is_directory(shard_dir, ec) || std::filesystem::is_symlink(shard_dir, ec)) return removed;
  for (const auto& entry : std::filesystem::directory_iterator(shard_dir)) {
    if (!is_link(entry) && plain_file(entry.path()) && is_shard_name(entry.path().filename().string())) {
      removed.push_back(entry.path());
    }
  }
  for (const auto& path : removed) std::filesystem::remove(path);
  std::filesystem::remove(shard_dir, ec);  // only when nothing else is left in it
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
  if (!plain_file(path)) return false;
  const support::ChildResult child =
      support::run_in_child([&] { return Hdf5Reader(path).int_attribute("step") == step ? "yes" : "no"; });
  return child.output && *child.output == "yes";
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
    std::filesystem::remove(path);
    pruning.removed.push_back(path);
    remove_shards(shard_directory(path));
  }
  return pruning;
}

std::vector<std::filesystem::path> remove_temporaries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return removed;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    const auto mark = name.find(".h5.tmp-");
    if (mark == std::string::npos || !checkpoint_step(name.substr(0, mark + 3))) continue;
    const std::string pid = name.substr(mark + 8);
    if (all_digits(pid) && !still_running(pid) && !is_link(entry) && plain_file(entry.path())) {
      removed.push_back(entry.path());
    }
  }
  for (const auto& path : removed) std::filesystem::remove(path);
  // Shard directories without their index: a sharded write that never
  // finished (the index is written last).
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    const auto step = shards_step(name);
    if (!step || is_link(entry) || !entry.is_directory(ec)) continue;
    if (std::filesystem::exists(dir / checkpoint_file_name(*step), ec)) continue;
    for (auto& shard : remove_shards(entry.path())) removed.push_back(std::move(shard));
  }
  return removed;
}

SetAside set_aside_after(const std::filesystem::path& dir, std::int64_t from) {
  SetAside result;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return result;
  std::vector<std::filesystem::path> beyond;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    auto step = checkpoint_step(name);
    if (!step) step = shards_step(name);
    if (step && *step > from) beyond.push_back(entry.path());
  }
  if (beyond.empty()) return result;
  std::sort(beyond.begin(), beyond.end());
  result.into =
      dir / fmt::format("superseded-from-step-{}-{}-{}", std::max<std::int64_t>(from, 0), utc_stamp(), getpid());
  support::make_real_directory(result.into, "directory of superseded checkpoints");
  for (const auto& path : beyond) {
    if (!support::rename_unless_taken(path, result.into / path.filename())) {
      throw CheckpointError(
          fmt::format("{}: cannot set it aside: {} exists", path.string(), (result.into / path.filename()).string()));
    }
    result.moved.push_back(path);
  }
  return result;
}

}  // namespace hpctrain::ckpt_file
