// What the reducer tests train: a tiny model, the same on every rank, and
// batches that differ between ranks but not between runs.
#pragma once

#include <torch/types.h>
#include <torch/utils.h>

#include <memory>
#include <utility>

#include "model/language_model.h"
#include "optim/optimizer.h"
#include "reduce/reducer.h"

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

// Optimizer steps from + 1 .. to, each on this rank's batch, as the trainer
// drives a reducer whose ranks step on their own gradients (DDAP's local steps).
inline void train_steps(Reducer& reducer, model::LanguageModel& model, optim::AdamW& optimizer, int rank, int from,
                        int to) {
  for (int s = from; s < to; ++s) {
    reducer.begin_step();
    const auto [x, y] = batch(rank, s);
    model::language_model_loss(model.forward(x), y).backward();
    reducer.end_backward();
    optimizer.step();
    reducer.after_optimizer_step(s + 1, false);
  }
}

}  // namespace hpctrain::reduce
