// The run's checkpoints (docs/checkpoints.md): which one a run resumes from
// (checkpoint.resume: rank 0 verifies and chooses, every rank learns its
// choice), whether a stored run can continue as this one, and the writes
// (rank 0, in the background unless a caller must wait), with what each cost
// in the log, and the best checkpoint (checkpoint.keep_best): the one of the
// lowest evaluation loss, which pruning never removes. Its step and loss go
// into every checkpoint (best_step, best_eval_loss), so a resumed run knows
// it and `--best` finds it from the newest. What else goes into a checkpoint
// is each component's own save().
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "ckpt/checkpoint_writer.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "train/run_log.h"

namespace hpctrain::train {

class Checkpointer {
 public:
  Checkpointer(const config::Experiment& experiment, comm::World& world, RunLog& log);

  // The checkpoint to resume from, the same on every rank; throws on every
  // rank when a checkpoint.resume file does not verify. Whatever the run
  // directory holds beyond the step the run starts from is set aside first
  // (ckpt_file::set_aside_after), so that it is neither pruned as this run's
  // nor taken for it by eval, export or the next auto-resume.
  [[nodiscard]] std::optional<std::filesystem::path> choose_resume();

  // Writes the checkpoint of step `step`, whose contents `build` makes on
  // every rank (one file: rank 0's is written, the others' dropped; sharded:
  // every rank's is its shard). With `wait`, returns when it is on disk;
  // sharded writes always wait.
  void write(std::int64_t step, const std::function<ckpt::Snapshot()>& build, bool wait);
  // Reports a background write that has finished.
  void poll();

  // An evaluation's loss at `step` (the periodic sample's, so every step is
  // measured alike). True with checkpoint.keep_best when it is the lowest so
  // far: this step's checkpoint, which the caller must then write, is the best.
  bool note_evaluation(std::int64_t step, double loss, std::int64_t tokens);
  void save(ckpt::Snapshot& snapshot) const;
  void load(const ckpt::CheckpointReader& checkpoint);

 private:
  void report(const ckpt::Written& written);
  void set_aside_beyond(const std::filesystem::path& dir, std::int64_t from);
  // The checkpoint pruning must spare (checkpoint.keep_best): empty before
  // any evaluation, or when the best is not kept.
  [[nodiscard]] std::filesystem::path kept_best() const;
  // checkpoint.sharded: every rank writes its shard, then (agreed) rank 0 the
  // index and the pruning. In the foreground: the index needs every rank's
  // shard on disk, which a background write would only know at a later step.
  // `build` runs inside the first agreement: a rank that fails to copy its
  // state stops every rank with its error instead of leaving them waiting.
  void write_sharded(std::int64_t step, const std::function<ckpt::Snapshot()>& build);

  const config::Experiment& experiment_;
  comm::World& world_;
  RunLog& log_;
  std::filesystem::path run_dir_;
  ckpt::CheckpointWriter writer_;
  std::int64_t best_step_ = -1;  // -1: no evaluation yet
  double best_loss_ = 0;
};

// What in the stored run stops `checkpoint` from continuing `now` (the
// architecture, the sequence length, the global batch, the tokenizer), one
// line each; the reducer adds its own (Reducer::incompatibilities).
std::vector<std::string> config_incompatibilities(const config::Experiment& now,
                                                  const ckpt::CheckpointReader& checkpoint,
                                                  const std::string& tokenizer_sha256);

}  // namespace hpctrain::train
