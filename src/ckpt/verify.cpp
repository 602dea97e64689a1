#include "ckpt/verify.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ckpt/checkpoint.h"
#include "ckpt/checkpoint_files.h"

namespace hpctrain::ckpt {

Verdict verify_checkpoint(const std::filesystem::path& path) {
  Verdict verdict{path, {}, 0, 0, 0};
  try {
    const Hdf5Reader file(path);
    const CheckpointInfo info = read_checkpoint_info(file);
    verdict.format = file.has_attribute("format_version") ? file.int_attribute("format_version") : 1;
    if (!file.has("model") || file.members("model").empty()) verdict.problems.emplace_back("no /model parameters");
    if (info.reducer == "ddap" && !file.has("replicas")) verdict.problems.emplace_back("ddap without /replicas");
    for (const auto& dataset : file.datasets()) {
      try {
        const auto t = file.tensor(dataset);
        ++verdict.datasets;
        verdict.bytes += static_cast<std::size_t>(t.numel()) * t.element_size();
      } catch (const std::exception& e) {
        verdict.problems.emplace_back(e.what());
      }
    }
  } catch (const std::exception& e) {
    verdict.problems.emplace_back(e.what());
  }
  // The path heads every line that reports a verdict; do not repeat it.
  const std::string prefix = path.string() + ": ";
  for (auto& problem : verdict.problems) {
    if (problem.rfind(prefix, 0) == 0) problem.erase(0, prefix.size());
  }
  return verdict;
}

std::string skipped_message(const Verdict& verdict) {
  return fmt::format("skipping checkpoint {}: {}", verdict.path.string(), fmt::join(verdict.problems, "; "));
}

std::optional<std::filesystem::path> newest_verified(const std::filesystem::path& dir,
                                                     const std::function<void(const Verdict&)>& skipped, Needs needs) {
  for (const auto& path : list_checkpoints(dir)) {
    Verdict verdict = verify_checkpoint(path);
    if (verdict.ok() && needs == Needs::kTrainingState && verdict.format < kFormatVersion) {
      verdict.problems.push_back(
          fmt::format("format {} holds weights only, no training state to resume", verdict.format));
    }
    if (verdict.ok()) return path;
    skipped(verdict);
  }
  return std::nullopt;
}

std::filesystem::path find_verified_weights(const std::filesystem::path& run_dir_or_file,
                                            const std::function<void(const Verdict&)>& skipped) {
  if (std::filesystem::is_regular_file(run_dir_or_file)) return run_dir_or_file;
  const auto dir = run_dir_or_file / "checkpoints";
  if (auto found = newest_verified(dir, skipped, Needs::kWeights)) return *found;
  (void)find_checkpoint(run_dir_or_file);  // names a run directory without any checkpoint
  throw CheckpointError(fmt::format("{}: no checkpoint in it verifies", dir.string()));
}

}  // namespace hpctrain::ckpt
