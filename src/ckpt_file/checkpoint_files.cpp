#include "ckpt_file/checkpoint_files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/shard_table.h"

namespace hpctrain::ckpt_file {
namespace {

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_checkpoint_name(const std::string& name) {
  return name.size() > 8 && name.rfind("step-", 0) == 0 && name.compare(name.size() - 3, 3, ".h5") == 0 &&
         all_digits(name.substr(5, name.size() - 8));
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

}  // namespace

std::vector<std::filesystem::path> remove_shards(const std::filesystem::path& shard_dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  if (!std::filesystem::is_directory(shard_dir, ec) || std::filesystem::is_symlink(shard_dir, ec)) return removed;
  for (const auto& entry : std::filesystem::directory_iterator(shard_dir)) {
    if (!entry.is_symlink() && entry.is_regular_file() && is_shard_name(entry.path().filename().string())) {
      removed.push_back(entry.path());
    }
  }
  for (const auto& path : removed) std::filesystem::remove(path);
  std::filesystem::remove(shard_dir, ec);  // only when nothing else is left in it
  return removed;
}

std::string checkpoint_file_name(std::int64_t step) { return fmt::format("step-{:08}.h5", step); }

std::filesystem::path temporary_name(const std::filesystem::path& path) {
  return path.string() + fmt::format(".tmp-{}", getpid());
}

std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return found;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file() && is_checkpoint_name(entry.path().filename().string())) found.push_back(entry.path());
  }
  // Longer digit strings are larger steps; equal lengths compare by name.
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    const auto x = a.filename().string();
    const auto y = b.filename().string();
    return x.size() != y.size() ? x.size() > y.size() : x > y;
  });
  return found;
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

std::vector<std::filesystem::path> prune_checkpoints(const std::filesystem::path& dir, std::int64_t keep,
                                                     const std::filesystem::path& kept) {
  std::vector<std::filesystem::path> removed;
  if (keep <= 0) return removed;
  const auto all = list_checkpoints(dir);
  for (std::size_t i = static_cast<std::size_t>(keep); i < all.size(); ++i) {
    if (!kept.empty() && all[i].filename() == kept.filename()) continue;
    std::filesystem::remove(all[i]);
    removed.push_back(all[i]);
    remove_shards(shard_directory(all[i]));
  }
  return removed;
}

std::vector<std::filesystem::path> remove_temporaries(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> removed;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return removed;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    const auto mark = name.find(".h5.tmp-");
    if (mark != std::string::npos && is_checkpoint_name(name.substr(0, mark + 3))) removed.push_back(entry.path());
  }
  for (const auto& path : removed) std::filesystem::remove(path);
  // Shard directories without their index: a sharded write that never
  // finished (the index is written last).
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    const auto dot = name.rfind(".shards");
    if (dot == std::string::npos || dot + 7 != name.size() || !entry.is_directory() || entry.is_symlink()) continue;
    const std::string index = name.substr(0, dot) + ".h5";
    if (!is_checkpoint_name(index) || std::filesystem::exists(dir / index, ec)) continue;
    for (auto& shard : remove_shards(entry.path())) removed.push_back(std::move(shard));
  }
  return removed;
}

}  // namespace hpctrain::ckpt_file
