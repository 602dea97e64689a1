// Validation: token-weighted mean loss and perplexity over a fixed prefix of
// the validation split, plus accuracy on the masked tokens for MLM models,
// summed over ranks (each rank takes every world-th sample).
#pragma once

#include <cstdint>

#include "comm/communicator.h"
#include "data/mlm_masking.h"
#include "data/token_dataset.h"
#include "model/language_model.h"

namespace hpctrain::train {

struct EvalResult {
  double loss = 0;
  double perplexity = 0;
  double masked_accuracy = 0;  // MLM only
  std::int64_t tokens = 0;     // predicted tokens, all ranks
};

EvalResult evaluate(model::LanguageModel& model, const data::TokenDataset& validation, const data::MlmMasking& masking,
                    std::int64_t batches, std::int64_t micro_batch, bool bf16, comm::Communicator& comm);

}  // namespace hpctrain::train
