// What the checkpoint harnesses do with a file, as auto-resume does: verify
// it and, when that passes, read what a restore reads (the root attributes,
// the stored config, every dataset). Any file must verify, or be named bad,
// or end in an error naming the file; nothing may crash, hang, leak or read
// outside its buffers.
//
// And one property beyond crashes: when verify vouches for a file (it passes
// with no warning that less was checked), what a restore reads from it must
// be what hpctrain wrote, i.e. what one of the seed checkpoints holds. A
// mutation that alters a file's config, step or a dataset's header while
// verify still says OK is a finding (aborts), just like a crash: fuzzing
// alone can show a checksum that misses part of the file.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

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

#ifndef HPCTRAIN_FUZZ_BEFORE_FIXES
// A dataset as a restore takes it: element type, shape and bytes. (The code
// before the hostile-input fixes has its own, in tests/fuzz/before-fixes.)
inline std::string dataset_reads(const hpctrain::ckpt_file::Hdf5Reader& file, const std::string& name) {
  const hpctrain::ckpt_file::ArrayInfo info = file.info(name);
  std::string out = std::string(hpctrain::ckpt_file::element_name(info.type)) + "[";
  for (const std::int64_t n : info.shape) out += std::to_string(n) + ",";
  const std::vector<unsigned char> bytes = file.read(name);
  return out + "]" + std::string(bytes.begin(), bytes.end());
}
#endif

// What a restore reads from the file, as one string.
inline std::string restore_reads(const std::filesystem::path& path) {
  using namespace hpctrain::ckpt_file;
  const Hdf5Reader file(path);
  const CheckpointInfo info = read_checkpoint_info(file);
  try {
    (void)hpctrain::config::load_experiment_text(info.config_toml, file.name() + " (stored config)");
  } catch (const hpctrain::config::ConfigError&) {
  }
  std::string reads = std::to_string(info.step) + "|" + std::to_string(info.world_size) + "|" + info.reducer + "|" +
                      info.config_toml + "|" + info.tokenizer_sha256 + "|" + info.git_commit + "|" + info.versions;
  for (const char* name : {"epoch", "sampler_step", "log_window_steps", "ddap_merges", "ddap_last_step",
                           "ddap_last_merge_applied_for", "ddap_started_at", "best_step"}) {
    if (file.has_attribute(name)) reads += std::string("|") + name + "=" + std::to_string(file.int_attribute(name));
  }
  for (const char* name : {"log_window_loss", "lr", "best_eval_loss"}) {
    if (!file.has_attribute(name)) continue;
    const double value = file.real_attribute(name);
    reads += std::string("|") + name + "=" + std::string(reinterpret_cast<const char*>(&value), sizeof value);
  }
  for (const auto& dataset : file.datasets()) reads += "|" + dataset + "=" + dataset_reads(file, dataset);
  return reads;
}

inline bool vouches(const hpctrain::ckpt_file::Verdict& verdict) { return verdict.ok() && verdict.warnings.empty(); }

// What a restore reads from each seed checkpoint that verify vouches for.
inline const std::vector<std::string>& vouched_seed_reads() {
  static const std::vector<std::string> seeds = [] {
    std::vector<std::string> out;
    for (const auto& entry :
         std::filesystem::directory_iterator(std::filesystem::path(HPCTRAIN_CORPUS_DIR) / "checkpoint")) {
      if (entry.path().filename().string().rfind("seed-", 0) != 0) continue;
      if (vouches(hpctrain::ckpt_file::verify_checkpoint_in_process(entry.path())))
        out.push_back(restore_reads(entry.path()));
    }
    return out;
  }();
  return seeds;
}

inline void verify_then_restore(const std::filesystem::path& path) {
  const hpctrain::ckpt_file::Verdict verdict = hpctrain::ckpt_file::verify_checkpoint_in_process(path);
  if (!verdict.ok()) return;
  std::string reads;
  try {
    reads = restore_reads(path);
  } catch (const hpctrain::ckpt_file::CheckpointError&) {
    return;
  } catch (const hpctrain::handles::Hdf5Error&) {
    return;
  }
  if (!vouches(verdict)) return;
  const std::vector<std::string>& seeds = vouched_seed_reads();
  if (std::find(seeds.begin(), seeds.end(), reads) == seeds.end()) {
    (void)std::fprintf(stderr, "verify vouched for %s, but a restore reads from it what no seed checkpoint holds\n",
                       path.c_str());
    std::abort();
  }
}

}  // namespace hpctrain::fuzz
