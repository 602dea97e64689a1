#include "train/checkpointer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

#include "ckpt_file/checkpoint_files.h"
#include "ckpt_file/verify.h"
#include "comm/consensus.h"
#include "support/text.h"

namespace hpctrain::train {
namespace {

enum class Choice : std::int64_t { kNone, kFile, kError };

// Test-only (tests/cli/sharded-checkpoints.sh): HPCTRAIN_TEST_KILL_AFTER_SHARD=
// RANK:STEP makes that rank SIGKILL itself once its shard of that step is on
// disk, before the index: a rank lost in the middle of a sharded write.
void die_here_if_asked(int rank, std::int64_t step) {
  // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing sets the environment once training runs
  const char* value = std::getenv("HPCTRAIN_TEST_KILL_AFTER_SHARD");
  if (value != nullptr && fmt::format("{}:{}", rank, step) == value) kill(getpid(), SIGKILL);
}

}  // namespace

Checkpointer::Checkpointer(const config::Experiment& experiment, comm::World& world, RunLog& log)
    : experiment_(experiment),
      world_(world),
      log_(log),
      run_dir_(experiment.job.run_dir),
      writer_(experiment.checkpoint.keep, experiment.checkpoint.async) {}

std::optional<std::filesystem::path> Checkpointer::choose_resume() {
  const config::CheckpointConfig& c = experiment_.checkpoint;
  auto choice = static_cast<std::int64_t>(Choice::kNone);
  std::string text;  // the file, or the error
  if (world_.rank() == 0) {
    try {
      const auto dir = run_dir_ / "checkpoints";
      ckpt_file::check_checkpoint_directory(dir);
      // In every mode: a temporary left by a dead writer of the same pid (a
      // container's) would block this run's write at that step.
      for (const auto& removed : ckpt_file::remove_temporaries(dir)) {
        log_.line(
            support::printable(fmt::format("removed {}: a checkpoint write that never finished", removed.string())));
      }
      std::int64_t from = -1;  // the step this run continues from; -1: from scratch
      if (c.resume == config::ResumeMode::kAuto) {
        if (const auto found = ckpt_file::newest_verified(
                dir, [this](const ckpt_file::Verdict& v) { log_.line(ckpt_file::skipped_message(v)); })) {
          for (const auto& warning : found->warnings) log_.line(fmt::format("{}: {}", found->path.string(), warning));
          choice = static_cast<std::int64_t>(Choice::kFile);
          text = found->path.string();
          from = ckpt_file::read_checkpoint_info(found->path).step;
        }
      } else if (c.resume == config::ResumeMode::kFile) {
        const ckpt_file::Verdict v = ckpt_file::verify_checkpoint(c.resume_file);
        if (!v.ok()) {
          throw ckpt_file::CheckpointError(
              fmt::format("checkpoint.resume = {} does not verify: {}", c.resume_file, fmt::join(v.problems, "; ")));
        }
        for (const auto& warning : v.warnings) log_.line(fmt::format("{}: {}", c.resume_file, warning));
        choice = static_cast<std::int64_t>(Choice::kFile);
        text = c.resume_file;
        from = ckpt_file::read_checkpoint_info(c.resume_file).step;
      }
      set_aside_beyond(dir, from);
    } catch (const std::exception& error) {
      choice = static_cast<std::int64_t>(Choice::kError);
      text = error.what();
    }
  }
  world_.comm().broadcast(&choice, 1, comm::DType::kInt64, 0);
  text = comm::broadcast_string(world_.comm(), text, 0);
  switch (static_cast<Choice>(choice)) {
    case Choice::kNone: return std::nullopt;
    case Choice::kFile: return std::filesystem::path(text);
    case Choice::kError: throw ckpt_file::CheckpointError(text);
  }
  return std::nullopt;
}

void Checkpointer::set_aside_beyond(const std::filesystem::path& dir, std::int64_t from) {
  const ckpt_file::SetAside aside = ckpt_file::set_aside_after(dir, from);
  for (const auto& why : aside.left) log_.line(support::printable(why));
  if (aside.moved.empty()) return;
  std::vector<std::string> names;
  names.reserve(aside.moved.size());
  for (const auto& path : aside.moved) names.push_back(path.filename().string());
  log_.line(support::printable(fmt::format(
      "moved {} into {}: {} beyond step {}, where this run {}, belong{} to another history (a rollback, an earlier "
      "run, files that did not verify); nothing of {} was deleted",
      fmt::join(names, ", "), aside.into.string(), names.size() == 1 ? "it lies" : "they lie",
      std::max<std::int64_t>(from, 0), from < 0 ? "starts" : "resumes", names.size() == 1 ? "s" : "",
      names.size() == 1 ? "it" : "them")));
}

void Checkpointer::report(const ckpt::Written& w) {
  for (const auto& why : w.left_alone) log_.line(support::printable(why));
  log_.line(fmt::format("checkpoint {} written: {:.1f} MB in {:.3f} s ({:.0f} MB/s){}", w.path.string(),
                        static_cast<double>(w.bytes) / 1e6, w.seconds,
                        static_cast<double>(w.bytes) / 1e6 / std::max(w.seconds, 1e-9),
                        w.pruned.empty() ? "" : fmt::format("; removed {} older", w.pruned.size())));
}

std::filesystem::path Checkpointer::kept_best() const {
  if (!experiment_.checkpoint.keep_best || best_step_ < 0) return {};
  return ckpt::checkpoint_path(run_dir_, best_step_);
}

void Checkpointer::write_sharded(std::int64_t step, const std::function<ckpt::Snapshot()>& build) {
  const auto start = std::chrono::steady_clock::now();
  const auto path = ckpt::checkpoint_path(run_dir_, step);
  const int rank = world_.rank();
  std::size_t bytes = 0;
  ckpt::Snapshot index;  // rank 0's root attributes; every rank's tensors go to its shard
  const ckpt_file::ShardEntry mine = comm::on_all_ranks(world_.comm(), [&] {
    ckpt::Snapshot snapshot = build();
    bytes = snapshot.bytes();
    index.info = snapshot.info;
    index.ints = std::move(snapshot.ints);
    index.reals = std::move(snapshot.reals);
    auto entry = ckpt::write_shard(path, rank, world_.size(), std::move(snapshot));
    die_here_if_asked(rank, step);
    return entry;
  });
  std::string lines;
  for (const auto& line : comm::allgather_strings(world_.comm(), ckpt_file::format_shard_table({mine}), 4096)) {
    lines += line;
  }
  const auto table = ckpt_file::parse_shard_table(lines, world_.size(), "the ranks' shard table");
  std::size_t total = 0;
  for (const auto& entry : table) total += entry.bytes;
  ckpt_file::Pruning pruning;
  comm::on_all_ranks(world_.comm(), [&] {
    if (rank != 0) return;
    ckpt::write_index(path, std::move(index), table);
    pruning = ckpt_file::prune_checkpoints(path.parent_path(), experiment_.checkpoint.keep, path, kept_best());
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  log_.line(fmt::format("checkpoint at step {}: {} shards written in parallel, this rank's {:.1f} MB; {:.1f} MB in all",
                        step, world_.size(), static_cast<double>(bytes) / 1e6, static_cast<double>(total) / 1e6));
  report({path, total, seconds, std::move(pruning.removed), std::move(pruning.left_alone)});
}

void Checkpointer::write(std::int64_t step, const std::function<ckpt::Snapshot()>& build, bool wait) {
  if (experiment_.checkpoint.sharded) {
    write_sharded(step, build);
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  ckpt::Snapshot snapshot = build();
  const bool writer = world_.rank() == 0;
  if (writer) {
    if (auto previous = writer_.wait()) report(*previous);
  }
  const std::size_t bytes = snapshot.bytes();
  if (writer) writer_.write(ckpt::checkpoint_path(run_dir_, step), std::move(snapshot), kept_best());
  log_.detail(fmt::format("checkpoint at step {}: {:.1f} MB snapshot; training blocked {:.1f} ms", step,
                          static_cast<double>(bytes) / 1e6,
                          1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()));
  if (wait && writer) {
    if (auto written = writer_.wait()) report(*written);
  }
}

bool Checkpointer::note_evaluation(std::int64_t step, double loss, std::int64_t tokens) {
  if (!experiment_.checkpoint.keep_best) return false;
  // A loss over no tokens, or one that is not finite, measures nothing: never the best.
  if (tokens <= 0 || !std::isfinite(loss)) {
    log_.line(fmt::format(
        "step {}: the evaluation loss {} over {} tokens is not a measurement; the best checkpoint "
        "stays {}",
        step, loss, tokens, best_step_ < 0 ? "unset" : ckpt::checkpoint_path(run_dir_, best_step_).string()));
    return false;
  }
  if (best_step_ >= 0 && !(loss < best_loss_)) return false;
  best_step_ = step;
  best_loss_ = loss;
  log_.line(fmt::format("step {}: the lowest evaluation loss so far ({:.4f}); {} is kept as the best checkpoint", step,
                        loss, ckpt::checkpoint_path(run_dir_, step).string()));
  return true;
}

void Checkpointer::save(ckpt::Snapshot& s) const {
  if (best_step_ < 0) return;
  s.ints.emplace_back("best_step", best_step_);
  s.reals.emplace_back("best_eval_loss", best_loss_);
}

void Checkpointer::load(const ckpt::CheckpointReader& c) {
  if (!c.file().has_attribute("best_step")) return;
  best_step_ = c.integer("best_step", 0);
  best_loss_ = c.real("best_eval_loss");
}

void Checkpointer::poll() {
  if (world_.rank() != 0) return;
  if (auto written = writer_.finished()) report(*written);
}

std::vector<std::string> config_incompatibilities(const config::Experiment& now,
                                                  const ckpt::CheckpointReader& checkpoint,
                                                  const std::string& tokenizer_sha256) {
  const ckpt_file::CheckpointInfo& info = checkpoint.info();
  const config::Experiment then =
      config::load_experiment_text(info.config_toml, checkpoint.name() + " (stored config)");
  std::vector<std::string> diff;
  auto compare = [&diff](const std::string& key, const auto& was, const auto& is) {
    if (was != is) diff.push_back(fmt::format("{}: checkpoint {} vs run {}", key, was, is));
  };
  compare("model.kind", config::name_of(then.model.kind), config::name_of(now.model.kind));
  compare("model.n_layer", then.model.n_layer, now.model.n_layer);
  compare("model.n_head", then.model.n_head, now.model.n_head);
  compare("model.d_model", then.model.d_model, now.model.d_model);
  compare("model.n_kv_head", then.model.n_kv_head, now.model.n_kv_head);
  compare("model.d_ff", then.model.d_ff, now.model.d_ff);
  compare("model.tie_embeddings", then.model.tie_embeddings, now.model.tie_embeddings);
  compare("model.norm_position", config::name_of(then.model.norm_position), config::name_of(now.model.norm_position));
  compare("data.seq_len", then.data.seq_len, now.data.seq_len);
  compare("training.batch_size", then.training.batch_size, now.training.batch_size);
  if (!info.tokenizer_sha256.empty() && info.tokenizer_sha256 != tokenizer_sha256) {
    diff.push_back(fmt::format("tokenizer sha256: checkpoint {} vs run {}", support::printable(info.tokenizer_sha256),
                               tokenizer_sha256));
  }
  return diff;
}

}  // namespace hpctrain::train
