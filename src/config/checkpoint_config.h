// [checkpoint]: when checkpoints are written, how many are kept, how, which
// one a run resumes from, and the preemption signal (docs/checkpoints.md).
#pragma once

#include <cstdint>
#include <string>

#include "config/choices.h"

namespace hpctrain::config {

class SectionReader;

enum class Signal { kUsr1, kUsr2, kTerm };
enum class ResumeMode { kAuto, kNever, kFile };

template <>
struct ChoiceTable<Signal> {
  static constexpr std::array<Choice<Signal>, 3> entries{
      {{"USR1", Signal::kUsr1}, {"USR2", Signal::kUsr2}, {"TERM", Signal::kTerm}}};
};

// docs/checkpoints.md. Preemption: `signal` asks every rank to stop at the next
// step boundary, write a checkpoint and exit with kRequeueExitCode.
struct CheckpointConfig {
  std::int64_t interval = 500;  // steps between checkpoints; 0: only at the end and on preemption
  std::int64_t keep = 3;        // newest checkpoints kept; 0 keeps all
  // Also keep the checkpoint of the lowest evaluation loss, never pruned
  // (written at that evaluation when it is not a checkpoint step).
  bool keep_best = true;
  bool async = true;  // write on a background thread while training goes on
  // Every rank writes its own shard in parallel, rank 0 an index after them
  // (docs/checkpoints.md, "Sharded checkpoints"); off: rank 0 writes one file.
  bool sharded = false;
  ResumeMode resume = ResumeMode::kAuto;  // auto (newest that verifies), never, or a file
  std::string resume_file;                // resume = kFile
  Signal signal = Signal::kUsr1;

  // After step `step`: every `interval` steps, and after the last (a stop asks for one too).
  [[nodiscard]] bool should_checkpoint(std::int64_t step, bool last) const {
    return last || (interval > 0 && step % interval == 0);
  }

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static CheckpointConfig read(SectionReader section);
};

// The exit status of a run stopped by the preemption signal after writing its
// checkpoint: "requeue me" to the batch script (EX_TEMPFAIL from sysexits.h).
constexpr int kRequeueExitCode = 75;

}  // namespace hpctrain::config
