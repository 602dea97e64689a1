// Checking a checkpoint end to end before trusting it: the file passes the
// reader's structural checks (hdf5_reader.cpp), the required attributes are
// there, every dataset reads back with a valid Fletcher32 checksum, and (from
// format 3) the manifest of every dataset's bytes, element type and shape and
// every attribute's value matches (manifest.h). Auto-resume picks the newest
// checkpoint that passes. Verification runs in a child process: a file that
// crashes libhdf5 itself is reported as BAD instead of ending hpctrain.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace hpctrain::ckpt_file {

struct Verdict {
  std::filesystem::path path;
  std::vector<std::string> problems;  // empty: the checkpoint verifies
  std::vector<std::string> warnings;  // it verifies, but less is checked (an older format)
  std::size_t datasets = 0;
  std::size_t bytes = 0;
  std::int64_t format = 0;  // format_version; 1: weights only (cannot resume)
  [[nodiscard]] bool ok() const { return problems.empty(); }
};

Verdict verify_checkpoint(const std::filesystem::path& path);
// The same checks in the calling process: for the fuzz harness, whose
// sanitizers and coverage must see the reading.
Verdict verify_checkpoint_in_process(const std::filesystem::path& path);

// Throws CheckpointError naming `path` when opening its datasets crashes
// libhdf5 (tried in a child process): for commands that read a checkpoint
// without verifying it first (`ckpt inspect`).
void check_libhdf5_survives(const std::filesystem::path& path);

// "skipping checkpoint PATH: reasons", as every command that passes one over says it.
std::string skipped_message(const Verdict& verdict);

enum class Needs { kWeights, kTrainingState };

// The newest checkpoint in `dir` that verifies and holds what is needed (a
// training state: format 2 or later); `skipped` hears about each newer one
// that did not, with the reason.
std::optional<Verdict> newest_verified(const std::filesystem::path& dir,
                                       const std::function<void(const Verdict&)>& skipped,
                                       Needs needs = Needs::kTrainingState);

// A checkpoint file as given, once it verifies, or the newest checkpoint of a
// run directory whose weights verify (eval, generate, export). Throws
// CheckpointError naming the file and what is wrong with it, or the run
// directory that has none. A file is verified before anything else it names
// (its config's tokenizer, its model) is opened: a crafted file is refused
// for what it is, not for what it points at.
std::filesystem::path find_verified_weights(const std::filesystem::path& run_dir_or_file,
                                            const std::function<void(const Verdict&)>& skipped);

// The best checkpoint of a run directory (checkpoint.keep_best): the one its
// newest verified checkpoint names as the lowest evaluation loss
// (best_step), once that one verifies too. Throws CheckpointError when the
// target is a file, or the run recorded no best, or its best is gone or bad.
std::filesystem::path find_verified_best(const std::filesystem::path& run_dir,
                                         const std::function<void(const Verdict&)>& skipped);

}  // namespace hpctrain::ckpt_file
