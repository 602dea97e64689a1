#include "train/trained_model.h"

#include <torch/torch.h>

namespace hpctrain::train {

TrainedModel load_trained_model(const std::filesystem::path& run_dir_or_checkpoint,
                                const std::vector<std::string>& overrides,
                                const std::function<void(const ckpt_file::Verdict&)>& skipped) {
  const auto path = ckpt_file::find_verified_weights(run_dir_or_checkpoint, skipped);
  auto info = ckpt_file::read_checkpoint_info(path);
  auto experiment = config::load_experiment_text(info.config_toml, path.string() + " (stored config)", overrides);
  auto tokenizer = data::Tokenizer::load(std::filesystem::path(experiment.data.dir) / "tokenizer.model");
  auto model = model::make_model(experiment.model, tokenizer.vocab_size());
  ckpt::load_weights(path, *model);
  return {path, std::move(info), std::move(experiment), std::move(tokenizer), std::move(model)};
}

}  // namespace hpctrain::train
