// Evaluation as a run does it, periodically and at the end, and as
// `hpctrain eval` does it on a checkpoint: which sequences are read, at which
// precision, summed over ranks (sequence_scores.h).
//  - periodic: eval.samples sequences spread over the whole validation split,
//    the same at every evaluation and every world size (data/eval_sample.h),
//    so curves are comparable and no region of the corpus dominates;
//  - final: the whole validation split (eval.final = "full"), or the sample;
//  - test: the whole test split, once, at the very end (data.test_fraction).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "comm/communicator.h"
#include "config/experiment.h"
#include "data/mlm_masking.h"
#include "data/token_dataset.h"
#include "data/tokenizer.h"
#include "model/language_model.h"
#include "train/sequence_scores.h"

namespace hpctrain::train {

struct Evaluation {
  EvalResult sample;               // the periodic sample: what curves and checkpoint.keep_best compare
  std::optional<EvalResult> full;  // the whole validation split, when this evaluation read it
  // What to report as this evaluation's result: the whole split when read.
  [[nodiscard]] const EvalResult& headline() const { return full ? *full : sample; }
};

class Evaluator {
 public:
  // The validation (and, with data.test_fraction > 0 and eval.test, the test)
  // split of the experiment's data set, which must have been made with `tokenizer`.
  // `tokenizer` is null for token files read without one (a causal model only).
  Evaluator(const config::Experiment& experiment, const data::Tokenizer* tokenizer);

  [[nodiscard]] Evaluation periodic(model::LanguageModel& model, comm::Communicator& comm) const;
  // eval.final = "full": the whole validation split, and the sample's figures
  // from the same pass; "sample": as periodic().
  [[nodiscard]] Evaluation final(model::LanguageModel& model, comm::Communicator& comm) const;
  [[nodiscard]] EvalResult full(model::LanguageModel& model, comm::Communicator& comm) const;
  // The whole test split; nothing when the run has none.
  [[nodiscard]] std::optional<EvalResult> test(model::LanguageModel& model, comm::Communicator& comm) const;

  [[nodiscard]] const data::TokenDataset& validation() const { return validation_; }
  [[nodiscard]] const std::vector<std::uint64_t>& sample() const { return sample_; }

 private:
  [[nodiscard]] SequenceScores score(model::LanguageModel& model, const data::TokenDataset& split,
                                     const std::vector<std::uint64_t>& indices, comm::Communicator& comm) const;

  config::EvalConfig eval_;
  std::int64_t micro_batch_;
  bool bf16_;
  data::TokenDataset validation_;
  std::optional<data::TokenDataset> test_;
  data::MlmMasking masking_;
  std::vector<std::uint64_t> sample_;  // the periodic evaluations' sequences
};

}  // namespace hpctrain::train
