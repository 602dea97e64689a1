// What the checkpoint harnesses do with a file, as auto-resume does: verify
// it and, when that passes, read what a restore reads (the root attributes,
// the stored config, every dataset). Any file must verify, or be named bad,
// or end in an error naming the file; nothing may crash, hang, leak or read
// outside its buffers.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

#include "ckpt_file/checkpoint_info.h"
#include "ckpt_file/verify.h"
#include "config/config_error.h"
#include "config/experiment.h"

namespace hpctrain::fuzz {

// A file of this process's own in /dev/shm (or the temporary directory).
inline std::filesystem::path scratch_file(const std::string& tag) {
  const std::filesystem::path shm = "/dev/shm";
  const auto dir = std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path();
  return dir / ("hpctrain-fuzz-" + tag + "-" + std::to_string(getpid()) + ".h5");
}

inline void restore_reads(const std::filesystem::path& path) {
  using namespace hpctrain::ckpt_file;
  const Hdf5Reader file(path);
  const CheckpointInfo info = read_checkpoint_info(file);
  try {
    (void)hpctrain::config::load_experiment_text(info.config_toml, file.name() + " (stored config)");
  } catch (const hpctrain::config::ConfigError&) {
  }
  for (const char* name : {"epoch", "sampler_step", "log_window_steps", "ddap_merges", "ddap_last_step",
                           "ddap_last_merge_applied_for", "ddap_started_at", "best_step"}) {
    if (file.has_attribute(name)) (void)file.int_attribute(name);
  }
  for (const char* name : {"log_window_loss", "lr", "best_eval_loss"}) {
    if (file.has_attribute(name)) (void)file.real_attribute(name);
  }
  for (const auto& dataset : file.datasets()) (void)file.read(dataset);
}

inline void verify_then_restore(const std::filesystem::path& path) {
  const hpctrain::ckpt_file::Verdict verdict = hpctrain::ckpt_file::verify_checkpoint_in_process(path);
  if (!verdict.ok()) return;
  try {
    restore_reads(path);
  } catch (const hpctrain::ckpt_file::CheckpointError&) {
  } catch (const hpctrain::handles::Hdf5Error&) {
  }
}

}  // namespace hpctrain::fuzz
