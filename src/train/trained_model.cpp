#include "train/trained_model.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <torch/types.h>

#include <sstream>

#include "ckpt/hf_import.h"

#include "config/hf_model_config.h"
#include "support/no_follow.h"
#include "support/text.h"
#include "train/weight_average.h"

namespace hpctrain::train {

std::filesystem::path choose_checkpoint(const std::filesystem::path& run_dir_or_checkpoint,
                                        const std::function<void(const ckpt_file::Verdict&)>& skipped,
                                        WeightsChoice choice) {
  return choice.best ? ckpt_file::find_verified_best(run_dir_or_checkpoint, skipped)
                     : ckpt_file::find_verified_weights(run_dir_or_checkpoint, skipped);
}

std::optional<data::Tokenizer> run_tokenizer(const config::Experiment& experiment,
                                             const ckpt_file::CheckpointInfo& info,
                                             const std::filesystem::path& checkpoint) {
  if (!experiment.data.has_tokenizer()) return std::nullopt;
  const std::filesystem::path tokenizer_file = std::filesystem::path(experiment.data.dir) / "tokenizer.model";
  data::Tokenizer tokenizer = data::Tokenizer::load(tokenizer_file);
  if (!info.tokenizer_sha256.empty() && tokenizer.hash() != info.tokenizer_sha256) {
    throw ckpt::CheckpointError(fmt::format(
        "{}: was trained with the tokenizer of sha256 {}, and {} (data.dir) is another ({}): the data set was "
        "prepared again since; point data.dir at the data set the run was trained on",
        checkpoint.string(), support::printable(info.tokenizer_sha256), tokenizer_file.string(), tokenizer.hash()));
  }
  return tokenizer;
}

std::string weights_group(WeightsChoice choice) { return choice.ema ? WeightAverage::kGroup : "model"; }

namespace {

// A checkpoint's weights, all finite: NaN weights score NaN and sample noise.
void refuse_non_finite(const model::LanguageModel& model, const std::filesystem::path& path, const std::string& group) {
  for (const auto& item : model.named_parameters()) {
    const at::Tensor bad = torch::logical_not(torch::isfinite(item.value().detach())).flatten();
    if (const std::int64_t count = bad.sum().item<std::int64_t>(); count > 0) {
      throw ckpt::CheckpointError(
          fmt::format("{}: {}/{} holds {} non-finite value{} (NaN or infinity): these weights "
                      "compute nothing; choose an earlier checkpoint",
                      path.string(), group, item.key(), count, count == 1 ? "" : "s"));
    }
  }
}

// A directory without a run's checkpoints/ that holds any of a Hugging Face
// model's files is read as one, so that a broken member is named rather
// than reported as "no checkpoint".
bool is_hugging_face_directory(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec) || std::filesystem::exists(path / "checkpoints", ec)) return false;
  for (const char* member : {"config.json", "model.safetensors", "model.safetensors.index.json"}) {
    if (support::file_kind_at(path / member) != support::FileKind::kNothing) return true;
  }
  return false;
}

// The member that keeps a Hugging Face directory from being read, or "".
std::string broken_member(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(dir / "config.json", ec)) {
    return fmt::format("{}: {}, not a regular file (a Hugging Face model's config)", (dir / "config.json").string(),
                       support::what_is_at(dir / "config.json"));
  }
  if (std::filesystem::is_regular_file(dir / "model.safetensors", ec) ||
      std::filesystem::is_regular_file(dir / "model.safetensors.index.json", ec)) {
    return "";
  }
  const auto weights = support::file_kind_at(dir / "model.safetensors") != support::FileKind::kNothing
                           ? dir / "model.safetensors"
                           : dir / "model.safetensors.index.json";
  return fmt::format("{}: {}, not a regular file (the model's weights)", weights.string(),
                     support::what_is_at(weights));
}

TrainedModel load_hugging_face_model(const std::filesystem::path& dir, const std::vector<std::string>& overrides,
                                     WeightsChoice choice) {
  if (choice.best || choice.ema) {
    throw ckpt::CheckpointError(fmt::format(
        "{}: a Hugging Face model directory holds one set of weights; --best and --ema choose among a run's",
        dir.string()));
  }
  if (const std::string broken = broken_member(dir); !broken.empty()) throw ckpt::CheckpointError(broken);
  // The experiment a fine-tune from it would have, before any step; a model
  // with fewer learned positions than data.seq_len's default is read at its
  // own length (a --set data.seq_len still wins).
  toml::table data;
  const config::HfModelConfig hf = config::read_hf_model_config(dir);
  if (hf.positions > 0 && hf.positions < config::DataConfig{}.seq_len) data.insert("seq_len", hf.positions);
  std::ostringstream text;
  text << toml::table{{"model", toml::table{{"init_from", dir.string()}}}, {"data", std::move(data)}};
  auto experiment = config::load_experiment_text(text.str(), dir.string() + " (Hugging Face model)", overrides);
  std::optional<data::Tokenizer> tokenizer;
  if (!experiment.data.tokenizer.empty() && experiment.data.tokenizer != "train") {
    tokenizer.emplace(data::Tokenizer::load(experiment.data.tokenizer));
    const std::filesystem::path data_tokenizer = std::filesystem::path(experiment.data.dir) / "tokenizer.model";
    std::error_code ec;
    if (std::filesystem::exists(data_tokenizer, ec)) {
      const std::string hash = data::Tokenizer::load(data_tokenizer).hash();
      if (hash != tokenizer->hash()) {
        throw ckpt::CheckpointError(fmt::format(
            "{}: data.dir {} was tokenized by another tokenizer ({}) than the model's {} ({}): prepare a data set "
            "with data.tokenizer = {}",
            dir.string(), experiment.data.dir, hash, experiment.data.tokenizer, tokenizer->hash(),
            experiment.data.tokenizer));
      }
    }
  }
  const std::int64_t vocab = tokenizer ? tokenizer->vocab_size() : experiment.data.vocab_size;
  ckpt::check_hf_weights(dir, experiment.model, vocab);  // from the headers, before the model is built
  auto model = model::make_model(experiment.model, vocab);
  ckpt::load_hf_weights(dir, experiment.model, *model);
  TrainedModel out{dir, true, {}, std::move(experiment), std::move(tokenizer), std::move(model)};
  return out;
}

}  // namespace

TrainedModel load_trained_model(const std::filesystem::path& run_dir_or_checkpoint,
                                const std::vector<std::string>& overrides,
                                const std::function<void(const ckpt_file::Verdict&)>& skipped, WeightsChoice choice) {
  if (is_hugging_face_directory(run_dir_or_checkpoint)) {
    return load_hugging_face_model(run_dir_or_checkpoint, overrides, choice);
  }
  const auto path = choose_checkpoint(run_dir_or_checkpoint, skipped, choice);
  auto info = ckpt_file::read_checkpoint_info(path);
  auto experiment = config::load_experiment_text(info.config_toml, path.string() + " (stored config)", overrides);
  std::optional<data::Tokenizer> tokenizer = run_tokenizer(experiment, info, path);
  // Token files without a tokenizer: the vocabulary prepare checked them against.
  const auto vocab = tokenizer ? tokenizer->vocab_size() : static_cast<int>(experiment.data.vocab_size);
  auto model = model::make_model(experiment.model, vocab);
  const ckpt::StoredCheckpoint file(path);
  const std::string group = weights_group(choice);
  if (choice.ema && file.members(group).empty()) {
    throw ckpt::CheckpointError(
        fmt::format("{}: holds no moving average of the weights (trained without "
                    "training.ema_decay)",
                    path.string()));
  }
  ckpt::load_parameters(file, group, *model);
  refuse_non_finite(*model, path, group);
  return {path, false, std::move(info), std::move(experiment), std::move(tokenizer), std::move(model)};
}

}  // namespace hpctrain::train
