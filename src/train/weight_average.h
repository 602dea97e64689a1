// The exponential moving average of the weights (training.ema_decay): after
// every optimizer step,
//   ema <- decay * ema + (1 - decay) * w,
// where w is what an evaluation measures (Reducer::evaluation_weights: the
// model under DDP, the last merge under DDAP), so the average is the same on
// every rank and never feeds back into training. It starts from the weights
// before the first step. The trainer evaluates it beside the raw weights;
// checkpoints keep it as ema/<parameter> (fp32, so a resume continues it bit
// for bit), and `hpctrain ckpt export --ema` ships it.
#pragma once

#include <ATen/core/Tensor.h>

#include "ckpt/checkpoint.h"
#include "model/language_model.h"

namespace hpctrain::train {

class WeightAverage {
 public:
  // `start`: the flat weights before the first step.
  WeightAverage(double decay, const at::Tensor& start);

  void update(const at::Tensor& weights);
  [[nodiscard]] const at::Tensor& weights() const { return average_; }
  [[nodiscard]] double decay() const { return decay_; }

  void save(ckpt::Snapshot& snapshot, const model::LanguageModel& model) const;
  // False when the checkpoint holds no average (written without
  // training.ema_decay): the average then starts again from `start`.
  bool load(const ckpt::CheckpointReader& checkpoint, const model::LanguageModel& model);

  static constexpr const char* kGroup = "ema";

 private:
  double decay_;
  at::Tensor average_;
};

}  // namespace hpctrain::train
