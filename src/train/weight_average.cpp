#include "train/weight_average.h"

#include <torch/utils.h>

namespace hpctrain::train {

WeightAverage::WeightAverage(double decay, const at::Tensor& start) : decay_(decay), average_(start.clone()) {}

void WeightAverage::update(const at::Tensor& weights) {
  torch::NoGradGuard no_grad;
  average_.mul_(decay_).add_(weights, 1.0 - decay_);
}

void WeightAverage::save(ckpt::Snapshot& snapshot, const model::LanguageModel& model) const {
  ckpt::add_parameters(snapshot, kGroup, average_, model);
}

bool WeightAverage::load(const ckpt::CheckpointReader& checkpoint, const model::LanguageModel& model) {
  const auto parameters = model.named_parameters();
  if (parameters.is_empty() || !checkpoint.has(std::string(kGroup) + "/" + parameters.begin()->key())) return false;
  average_ = ckpt::read_flat_parameters(checkpoint, kGroup, model).to(average_.device());
  return true;
}

}  // namespace hpctrain::train
