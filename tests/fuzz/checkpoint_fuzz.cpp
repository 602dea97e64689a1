// Fuzz harness: the checkpoint reader (ckpt_file/), on mutations of real
// checkpoints (the seed corpus holds small DDP and DDAP ones). As auto-resume
// does, it verifies the file and, when that passes, reads what a restore reads:
// the root attributes, the stored config, and every dataset. Any input must
// verify, or be named bad, or end in an error naming the file; nothing may
// crash, hang, leak or read outside its buffers.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ckpt_file/checkpoint_info.h"
#include "ckpt_file/verify.h"
#include "config/config_error.h"
#include "config/experiment.h"

namespace {

std::filesystem::path scratch_file() {
  const std::filesystem::path shm = "/dev/shm";
  const auto dir = std::filesystem::is_directory(shm) ? shm : std::filesystem::temp_directory_path();
  return dir / ("hpctrain-fuzz-ckpt-" + std::to_string(getpid()) + ".h5");
}

void restore_reads(const std::filesystem::path& path) {
  using namespace hpctrain::ckpt_file;
  const Hdf5Reader file(path);
  const CheckpointInfo info = read_checkpoint_info(file);
  try {
    (void)hpctrain::config::load_experiment_text(info.config_toml, file.name() + " (stored config)");
  } catch (const hpctrain::config::ConfigError&) {
  }
  for (const char* name : {"epoch", "sampler_step", "log_window_steps", "ddap_merges", "ddap_last_step",
                           "ddap_last_merge_applied_for", "ddap_started_at"}) {
    if (file.has_attribute(name)) (void)file.int_attribute(name);
  }
  for (const char* name : {"log_window_loss", "lr"}) {
    if (file.has_attribute(name)) (void)file.real_attribute(name);
  }
  for (const auto& dataset : file.datasets()) (void)file.read(dataset);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = scratch_file();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  const hpctrain::ckpt_file::Verdict verdict = hpctrain::ckpt_file::verify_checkpoint_in_process(path);
  if (verdict.ok()) {
    try {
      restore_reads(path);
    } catch (const hpctrain::ckpt_file::CheckpointError&) {
    } catch (const hpctrain::handles::Hdf5Error&) {
    }
  }
  return 0;
}
