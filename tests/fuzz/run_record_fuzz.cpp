// Fuzz harness: a run directory as `jobgen status|logs|cancel` read it
// (jobgen/run_record, jobgen/run_status), written by batch scripts and by
// anyone else who can write to the project: the input is jobs.jsonl, then
// after a NUL byte metrics.jsonl, then after another an optional
// sweep-manifest.json. Any input must end in a run (whose unreadable lines are
// named) or a RunDirError/InputError, and nothing read from it may reach a
// terminal or a command line unchecked: every job id that jobgen would hand
// to squeue or scancel has SLURM's shape, and the text status prints from the
// record (its state), once escaped, holds no control character.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "jobgen/run_record.h"
#include "jobgen/run_status.h"
#include "scratch_dir.h"
#include "split_input.h"
#include "support/bounded_file.h"
#include "support/text.h"

namespace {

void put(const std::filesystem::path& file, const std::string* text) {
  std::error_code ec;
  std::filesystem::remove(file, ec);
  if (text != nullptr) std::ofstream(file, std::ios::binary | std::ios::trunc) << *text;
}

// A terminal acts on C0 and C1 controls: none may survive printable().
bool holds_control(const std::string& shown) {
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const auto u = static_cast<unsigned char>(shown[i]);
    if (u < 0x20 || u == 0x7f) return true;
    if (u == 0xC2 && i + 1 < shown.size() && static_cast<unsigned char>(shown[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(shown[i + 1]) <= 0x9F) {
      return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = hpctrain::fuzz::scratch_dir("run");
  const auto parts = hpctrain::fuzz::split_at_nul(data, size);
  put(dir / "jobs.jsonl", &parts[0]);
  put(dir / "metrics.jsonl", parts.size() > 1 ? &parts[1] : nullptr);
  put(dir / "sweep-manifest.json", parts.size() > 2 ? &parts[2] : nullptr);
  try {
    for (const auto& point : hpctrain::jobgen::read_run(dir)) {
      for (const auto& id : hpctrain::jobgen::job_ids(point)) {
        if (!hpctrain::jobgen::is_slurm_id(id)) std::abort();  // would reach squeue or scancel
      }
      (void)hpctrain::jobgen::ended_for_good(point);
      if (holds_control(hpctrain::support::printable(hpctrain::jobgen::recorded_state(point)))) std::abort();
      for (const auto& line : point.skipped) {
        if (holds_control(line)) std::abort();  // printed as a warning
      }
      const auto progress = hpctrain::jobgen::read_progress(point.dir);
      if (progress.step && *progress.step < 0) std::abort();
      if (progress.eta_s) (void)hpctrain::support::format_duration(*progress.eta_s);
    }
  } catch (const hpctrain::jobgen::RunDirError&) {
    // refused, naming the file
  } catch (const hpctrain::support::InputError&) {
    // refused, naming the file
  }
  return 0;
}
