#include "ckpt_file/checkpoint_files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "ckpt_file/checkpoint_error.h"

namespace hpctrain::ckpt_file {
namespace {

bool is_checkpoint_name(const std::string& name) {
  return name.size() > 8 && name.rfind("step-", 0) == 0 && name.compare(name.size() - 3, 3, ".h5") == 0 &&
         std::all_of(name.begin() + 5, name.end() - 3, [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

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
  return removed;
}

}  // namespace hpctrain::ckpt_file
