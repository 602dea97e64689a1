#include "cli/ckpt_commands.h"

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <map>

#include "ckpt/checkpoint.h"
#include "ckpt/hf_export.h"
#include "ckpt/hf_layout.h"
#include "ckpt/safetensors_export.h"
#include "ckpt_file/checkpoint_files.h"
#include "ckpt_file/verify.h"
#include "support/text.h"

namespace hpctrain::cli {
namespace {

using support::printable;

std::string megabytes(std::size_t bytes) { return fmt::format("{:.2f} MB", static_cast<double>(bytes) / 1e6); }

}  // namespace

void run_ckpt_inspect(const std::string& target, bool all, bool config, std::ostream& out) {
  const auto path = ckpt_file::find_checkpoint(target);
  ckpt_file::check_libhdf5_survives(path);
  const ckpt_file::StoredCheckpoint file(path);
  const ckpt_file::CheckpointInfo info = ckpt_file::read_checkpoint_info(file.index());
  fmt::print(out, "checkpoint   {}\n", path.string());
  fmt::print(out, "step         {}\n", info.step);
  fmt::print(out, "reducer      {} over {} rank{}\n", printable(info.reducer), info.world_size,
             info.world_size == 1 ? "" : "s");
  if (file.shard_count() > 0) {
    fmt::print(out, "shards       {}, one per rank, in {}\n", file.shard_count(),
               ckpt_file::shard_directory(path).string());
  }
  for (const char* name : {"epoch", "sampler_step", "ddap_merges"}) {
    if (file.has_attribute(name)) fmt::print(out, "{:<12} {}\n", name, file.int_attribute(name));
  }
  if (file.has_attribute("lr")) fmt::print(out, "lr           {:.6g}\n", file.real_attribute("lr"));
  if (file.has_attribute("best_step")) {
    const std::int64_t best = file.int_attribute("best_step");
    fmt::print(out, "best         step {} (evaluation loss {:.4f}): {}{}\n", best,
               file.real_attribute("best_eval_loss"),
               (path.parent_path() / ckpt_file::checkpoint_file_name(best)).string(),
               best == info.step ? ", this checkpoint" : "");
  }
  if (!file.members("ema").empty()) fmt::print(out, "weights      trained, and their moving average (/ema)\n");
  // Strings from the file: shown, never acted on by the terminal.
  fmt::print(out, "git commit   {}\n", printable(info.git_commit));
  fmt::print(out, "versions     {}\n", printable(info.versions));
  fmt::print(out, "tokenizer    sha256 {}\n",
             info.tokenizer_sha256.empty() ? "(not recorded)" : printable(info.tokenizer_sha256));

  // Datasets by top-level group (replicas by rank).
  std::map<std::string, std::pair<std::size_t, std::size_t>> groups;  // count, bytes
  const auto& datasets = file.datasets();
  for (const auto& d : datasets) {
    std::string group = d.substr(0, d.find('/'));
    if (group == "replicas") group = d.substr(0, d.find('/', d.find('/') + 1));
    const ckpt_file::ArrayInfo stored = file.info(d);
    auto& [count, bytes] = groups[group];
    ++count;
    bytes += stored.bytes;
    if (all)
      fmt::print(out, "  {:<60} {:<8} {}\n", printable(d), ckpt_file::element_name(stored.type),
                 fmt::join(stored.shape, "x"));
  }
  fmt::print(out, "{:<24} {:>9} {:>12}\n", "group", "datasets", "size");
  for (const auto& [group, stats] : groups) {
    fmt::print(out, "{:<24} {:>9} {:>12}\n", printable("/" + group), stats.first, megabytes(stats.second));
  }
  if (config) fmt::print(out, "\n# stored config\n{}\n", support::printable_lines(info.config_toml));
}

int run_ckpt_verify(const std::vector<std::string>& targets, std::ostream& out) {
  int bad = 0;
  for (const auto& target : targets) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(target)) {
      const auto dir = std::filesystem::is_directory(std::filesystem::path(target) / "checkpoints")
                           ? std::filesystem::path(target) / "checkpoints"
                           : std::filesystem::path(target);
      files = ckpt_file::list_checkpoints(dir);
      if (files.empty()) {
        fmt::print(out, "BAD  {}: no step-*.h5 checkpoints\n", target);
        ++bad;
      }
    } else {
      files.emplace_back(target);
    }
    for (const auto& file : files) {
      const ckpt_file::Verdict v = ckpt_file::verify_checkpoint(file);
      if (v.ok()) {
        fmt::print(out, "OK   {} (format {}, {} datasets, {}, {})\n", file.string(), v.format, v.datasets,
                   megabytes(v.bytes),
                   v.warnings.empty() ? "every checksum and the manifest valid" : "every checksum valid");
        for (const auto& warning : v.warnings) fmt::print(out, "     warning: {}\n", printable(warning));
      } else {
        fmt::print(out, "BAD  {}: {}\n", file.string(), printable(fmt::format("{}", fmt::join(v.problems, "; "))));
        ++bad;
      }
    }
  }
  return bad;
}

void run_ckpt_export(const std::string& target, const std::string& out_file, train::WeightsChoice weights,
                     const std::string& format, std::ostream& out) {
  const auto path = train::choose_checkpoint(
      target, [&out](const ckpt_file::Verdict& v) { fmt::print(out, "{}\n", ckpt_file::skipped_message(v)); }, weights);
  if (format == "hf") {
    const ckpt_file::CheckpointInfo info = ckpt_file::read_checkpoint_info(path);
    ckpt::HfExportRequest request{
        path, config::load_experiment_text(info.config_toml, path.string() + " (stored config)", {}), out_file,
        train::weights_group(weights), std::nullopt};
    const std::optional<data::Tokenizer> tokenizer = train::run_tokenizer(request.experiment, info, path);
    if (tokenizer) request.tokenizer_model = tokenizer->model_bytes();
    const auto result = ckpt::export_hf(request);
    fmt::print(out, "{}: a Hugging Face {} ({} tensors, {} of float32 {}weights{}) from {}\n", out_file,
               ckpt::hf_architecture(request.experiment.model), result.tensors, megabytes(result.bytes),
               weights.ema ? "moving-average " : "", tokenizer ? ", the tokenizer" : ", no tokenizer (token files)",
               path.string());
    return;
  }
  const auto result = ckpt::export_safetensors(path, out_file, train::weights_group(weights));
  fmt::print(out, "{}: {} tensors, {} of float32 {}weights from {}\n", out_file, result.tensors,
             megabytes(result.bytes), weights.ema ? "moving-average " : "", path.string());
}

}  // namespace hpctrain::cli
