// What the reducer tests train: a tiny model, the same on every rank, and
// batches that differ between ranks but not between runs.
#pragma once

#include <torch/types.h>
#include <torch/utils.h>

#include <memory>
#include <utility>

#include "model/language_model.h"

namespace hpctrain::reduce {

constexpr std::int64_t kVocab = 64;

inline std::shared_ptr<model::LanguageModel> tiny_model(config::ModelKind kind = config::ModelKind::kGpt) {
  config::ModelConfig c;
  c.kind = kind;
  c.n_layer = 2;
  c.n_head = 2;
  c.d_model = 16;
  c.max_seq_len = 8;
  torch::manual_seed(3);
  return model::make_model(c, kVocab);
}

// This rank's batch for `step`.
inline std::pair<torch::Tensor, torch::Tensor> batch(int rank, int step, int size = 4) {
  torch::manual_seed(1000 * step + rank);
  return {torch::randint(kVocab, {size, 8}), torch::randint(kVocab, {size, 8})};
}

}  // namespace hpctrain::reduce
