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

// The samples `indices[begin, begin + count)` as read from the data set:
// [count, T + 1] int64. Throws DataError where a shard no longer holds them.
at::Tensor read_samples(const data::TokenDataset& dataset, const std::vector<std::uint64_t>& indices, std::size_t begin,
                        std::size_t count);

// Rows [begin, begin + count) of `samples` (read_samples of all `indices`)
// as a batch; `epoch` varies the MLM masking between epochs, and a sample's
// masking is keyed by its index in the data set of `dataset_size` samples.
Batch make_batch(const at::Tensor& samples, const std::vector<std::uint64_t>& indices, std::size_t begin,
                 std::size_t count, model::Objective objective, const data::MlmMasking& masking, std::uint64_t epoch,
                 std::uint64_t dataset_size);

// `indices[begin, begin + count)` read and made a batch at once.
Batch make_batch(const data::TokenDataset& dataset, const std::vector<std::uint64_t>& indices, std::size_t begin,
                 std::size_t count, model::Objective objective, const data::MlmMasking& masking, std::uint64_t epoch);

}  // namespace hpctrain::train
