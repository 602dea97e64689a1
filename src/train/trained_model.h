// A trained model back from a checkpoint, for `hpctrain eval` and
// `hpctrain generate`: the checkpoint's own resolved config (plus --set
// overrides), the model built from it with the stored weights, and the
// tokenizer of its data set (none for token files read without one).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "ckpt_file/verify.h"
#include "config/experiment.h"
#include "data/tokenizer.h"
#include "model/language_model.h"

namespace hpctrain::train {

// Which weights of a run: its newest checkpoint or its best
// (checkpoint.keep_best), and the trained weights or their moving average
// (training.ema_decay).
struct WeightsChoice {
  bool best = false;
  bool ema = false;
};

struct TrainedModel {
  std::filesystem::path checkpoint;  // or the Hugging Face model directory
  bool hugging_face = false;         // a model directory (docs/models.md), not a checkpoint: `info` is empty
  ckpt_file::CheckpointInfo info;
  config::Experiment experiment;
  std::optional<data::Tokenizer> tokenizer;
  std::shared_ptr<model::LanguageModel> model;
};

// A run directory gives its newest checkpoint that verifies (or, with
// choice.best, its best); `skipped` hears about each newer one that does not.
// A Hugging Face model directory (config.json and safetensors weights, no
// checkpoints/) gives its model as model.init_from would build it, with its
// own tokenizer; `overrides` name the data set to evaluate on (data.dir),
// which must have been tokenized by that tokenizer.
TrainedModel load_trained_model(const std::filesystem::path& run_dir_or_checkpoint,
                                const std::vector<std::string>& overrides,
                                const std::function<void(const ckpt_file::Verdict&)>& skipped,
                                WeightsChoice choice = {});

// The checkpoint `choice` picks of a run directory or file, verified.
std::filesystem::path choose_checkpoint(const std::filesystem::path& run_dir_or_checkpoint,
                                        const std::function<void(const ckpt_file::Verdict&)>& skipped,
                                        WeightsChoice choice);
// The tokenizer of the data set a checkpoint's run read (none for token files
// read without one); refused when it is not the one the run trained with.
std::optional<data::Tokenizer> run_tokenizer(const config::Experiment& experiment,
                                             const ckpt_file::CheckpointInfo& info,
                                             const std::filesystem::path& checkpoint);
// The group of the checkpoint holding the chosen weights: "model" or "ema".
std::string weights_group(WeightsChoice choice);

}  // namespace hpctrain::train
