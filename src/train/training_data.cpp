#include "train/training_data.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/types.h>

namespace hpctrain::train {

TokenData::TokenData(const data::TokenDataset& dataset, std::uint64_t global_batch, int rank, int world,
                     std::uint64_t seed, model::Objective objective, data::MlmMasking masking)
    : dataset_(dataset),
      sampler_(dataset.size(), global_batch, rank, world, seed),
      objective_(objective),
      masking_(std::move(masking)) {}

void TokenData::begin_step() {
  // The epoch of the samples about to be drawn: a finished epoch's position
  // rolls over into the next one when sampling.
  epoch_ = sampler_.state().epoch + (sampler_.state().step == sampler_.steps_per_epoch() ? 1 : 0);
  indices_ = sampler_.next();
  // A rank without samples this step (fewer samples than ranks) stands in
  // with one, which the trainer weighs 0 (batch_geometry.h).
  if (indices_.empty()) indices_ = {0};
}

Batch TokenData::micro_batch(std::size_t offset, std::size_t count) const {
  return make_batch(dataset_, indices_, offset, count, objective_, masking_, epoch_);
}

void TokenData::save(ckpt::Snapshot& snapshot) const {
  snapshot.ints.emplace_back("epoch", static_cast<std::int64_t>(sampler_.state().epoch));
  snapshot.ints.emplace_back("sampler_step", static_cast<std::int64_t>(sampler_.state().step));
}

void TokenData::load(const ckpt::CheckpointReader& checkpoint) {
  sampler_.restore({static_cast<std::uint64_t>(checkpoint.integer("epoch", 0)),
                    static_cast<std::uint64_t>(checkpoint.integer("sampler_step", 0))});
}

RandomTokens::RandomTokens(std::int64_t vocab_size, std::int64_t seq_len, std::uint64_t seed)
    : vocab_size_(vocab_size), seq_len_(seq_len), generator_(at::detail::createCPUGenerator(seed)) {}

Batch RandomTokens::micro_batch(std::size_t /*offset*/, std::size_t count) const {
  const torch::Tensor sample =
      torch::randint(vocab_size_, {static_cast<std::int64_t>(count), seq_len_ + 1}, generator_, torch::kInt64);
  return {sample.narrow(1, 0, seq_len_).contiguous(), sample.narrow(1, 1, seq_len_).contiguous()};
}

}  // namespace hpctrain::train
