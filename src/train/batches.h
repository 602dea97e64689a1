// Turning sampled indices into model inputs and targets.
//   causal: inputs = sample[0, T), targets = sample[1, T]
//   masked: inputs = sample[0, T) after MLM masking, targets = its labels
#pragma once

#include <cstdint>
#include <vector>

#include "data/mlm_masking.h"
#include "data/token_dataset.h"
#include "model/language_model.h"

namespace hpctrain::train {

struct Batch {
  at::Tensor inputs;   // [b, T] int64
  at::Tensor targets;  // [b, T] int64, -100 where nothing is predicted
};

// `indices[begin, begin + count)`; `epoch` varies the MLM masking between epochs.
Batch make_batch(const data::TokenDataset& dataset, const std::vector<std::uint64_t>& indices, std::size_t begin,
                 std::size_t count, model::Objective objective, const data::MlmMasking& masking, std::uint64_t epoch);

}  // namespace hpctrain::train
