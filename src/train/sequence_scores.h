// Evaluation: the token-weighted mean loss and perplexity of a model over
// given sequences of a split, plus accuracy on the masked tokens for MLM
// models. Every rank gets the same ascending list of sequence indices and
// scores every world-th; the per-sequence scores are gathered and added in
// sequence order, so a result covers the same sequences, added in the same
// order, at any world size (Evaluator chooses the sequences).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "data/mlm_masking.h"
#include "data/token_dataset.h"
#include "model/language_model.h"

namespace hpctrain::train {

struct EvalResult {
  double loss = 0;
  double perplexity = 0;
  double masked_accuracy = 0;   // MLM only
  std::int64_t tokens = 0;      // predicted tokens, all ranks
  std::int64_t sequences = 0;   // evaluated, all ranks
  std::int64_t population = 0;  // sequences in the split
  std::string split = "val";    // "val" or "test"
  [[nodiscard]] bool full() const { return sequences == population; }
  // "155904 tokens, all 609 sequences of the validation split" or
  // "131072 tokens, a sample of 512 of the 609 sequences of the validation split".
  [[nodiscard]] std::string coverage() const;
};

// One score per evaluated sequence, in the order of the indices it was given:
// its summed token losses, predicted tokens and correct predictions.
struct SequenceScores {
  std::vector<std::uint64_t> indices;
  std::vector<double> loss_sum;
  std::vector<double> tokens;
  std::vector<double> correct;
  std::int64_t population = 0;
  std::string split;
};

// Collective: every rank passes the same `indices` and gets every score.
SequenceScores score_sequences(model::LanguageModel& model, const data::TokenDataset& dataset,
                               const std::vector<std::uint64_t>& indices, const data::MlmMasking& masking,
                               std::int64_t micro_batch, bool bf16, comm::Communicator& comm);

// The result over all scored sequences, or over those of `subset` (ascending,
// each one of the scored indices).
EvalResult summarize(const SequenceScores& scores);
EvalResult summarize(const SequenceScores& scores, const std::vector<std::uint64_t>& subset);

}  // namespace hpctrain::train
