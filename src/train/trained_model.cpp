#include "train/trained_model.h"

#include <fmt/format.h>

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

TrainedModel load_trained_model(const std::filesystem::path& run_dir_or_checkpoint,
                                const std::vector<std::string>& overrides,
                                const std::function<void(const ckpt_file::Verdict&)>& skipped, WeightsChoice choice) {
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
  return {path, std::move(info), std::move(experiment), std::move(tokenizer), std::move(model)};
}

}  // namespace hpctrain::train
