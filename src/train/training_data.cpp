#include "train/training_data.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>

#include "data/data_error.h"

namespace hpctrain::train {

TokenData::TokenData(const data::TokenDataset& dataset, std::uint64_t global_batch, int rank, int world,
                     std::uint64_t seed, model::Objective objective, data::MlmMasking masking)
    : dataset_(dataset),
      sampler_(dataset.size(), global_batch, rank, world, seed),
      objective_(objective),
      masking_(std::move(masking)) {}

TokenData::StepSamples TokenData::draw() {
  StepSamples step;
  // The epoch of the samples about to be drawn: a finished epoch's position
  // rolls over into the next one when sampling.
  const data::SamplerState at = sampler_.state();
  step.epoch = at.epoch + (at.step == sampler_.steps_per_epoch() ? 1 : 0);
  step.indices = sampler_.next();
  // A rank without samples this step (fewer samples than ranks) stands in
  // with one, which the trainer weighs 0 (batch_geometry.h).
  if (step.indices.empty()) step.indices = {0};
  step.after = sampler_.state();
  return step;
}

void TokenData::read(StepSamples& step) const {
  step.samples = read_samples(dataset_, step.indices, 0, step.indices.size());
}

std::optional<std::string> TokenData::read_ahead(std::size_t steps) {
  while (ahead_.size() < steps) ahead_.push_back(draw());
  // A read that failed before is tried again: the shard may be back.
  for (std::size_t i = 0; i < steps; ++i) {
    if (ahead_[i].samples.defined()) continue;
    try {
      read(ahead_[i]);
    } catch (const data::DataError& e) {
      return e.what();
    }
  }
  return std::nullopt;
}

void TokenData::begin_step() {
  if (ahead_.empty()) ahead_.push_back(draw());
  current_ = std::move(ahead_.front());
  ahead_.pop_front();
  if (!current_.samples.defined()) read(current_);
  taken_ = current_.after;
}

Batch TokenData::micro_batch(std::size_t offset, std::size_t count) const {
  return make_batch(current_.samples, current_.indices, offset, count, objective_, masking_, current_.epoch,
                    dataset_.size());
}

// The position after the step begun, not the sampler's own: it has drawn
// the steps read ahead, which a resume draws again.
void TokenData::save(ckpt::Snapshot& snapshot) const {
  snapshot.ints.emplace_back("epoch", static_cast<std::int64_t>(taken_.epoch));
  snapshot.ints.emplace_back("sampler_step", static_cast<std::int64_t>(taken_.step));
}

void TokenData::load(const ckpt::CheckpointReader& checkpoint) {
  taken_ = {static_cast<std::uint64_t>(checkpoint.integer("epoch", 0)),
            static_cast<std::uint64_t>(checkpoint.integer("sampler_step", 0))};
  sampler_.restore(taken_);
  ahead_.clear();
}

RandomTokens::RandomTokens(std::int64_t vocab_size, std::int64_t seq_len, std::uint64_t seed)
    : vocab_size_(vocab_size), seq_len_(seq_len), generator_(at::detail::createCPUGenerator(seed)) {}

Batch RandomTokens::micro_batch(std::size_t /*offset*/, std::size_t count) const {
  const torch::Tensor sample =
      torch::randint(vocab_size_, {static_cast<std::int64_t>(count), seq_len_ + 1}, generator_, torch::kInt64);
  return {sample.narrow(1, 0, seq_len_).contiguous(), sample.narrow(1, 1, seq_len_).contiguous()};
}

}  // namespace hpctrain::train
