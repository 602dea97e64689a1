// Evaluation as a run does it, periodically and at the end, and as
// `hpctrain eval` does it on a checkpoint: one definition of which samples are
// read, at which precision, summed over ranks (evaluate.h).
#pragma once

#include <filesystem>

#include "comm/communicator.h"
#include "config/experiment.h"
#include "data/mlm_masking.h"
#include "data/token_dataset.h"
#include "data/tokenizer.h"
#include "model/language_model.h"
#include "train/evaluate.h"

namespace hpctrain::train {

class Evaluator {
 public:
  // The validation split of the experiment's data set, which must have been
  // made with `tokenizer`.
  Evaluator(const config::Experiment& experiment, const data::Tokenizer& tokenizer);

  [[nodiscard]] EvalResult run(model::LanguageModel& model, comm::Communicator& comm) const;
  [[nodiscard]] const data::TokenDataset& validation() const { return validation_; }

 private:
  config::EvalConfig eval_;
  std::int64_t micro_batch_;
  bool bf16_;
  data::TokenDataset validation_;
  data::MlmMasking masking_;
};

}  // namespace hpctrain::train
