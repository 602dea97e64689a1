// Where a step's batches come from. TokenData reads the prepared data set:
// the distributed sampler picks this rank's samples for each optimizer step,
// and each micro-step takes its slice of them as a Batch (MLM-masked for a
// masked model). RandomTokens draws uniform tokens, for the benches, which
// time the trainer's own step on any model shape without a data set.
// Each saves and loads its position in a checkpoint.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ckpt/checkpoint.h"
#include "config/experiment.h"
#include "data/mlm_masking.h"
#include "data/sampler.h"
#include "data/token_dataset.h"
#include "model/language_model.h"
#include "train/batches.h"

namespace hpctrain::train {

class TrainingData {
 public:
  virtual ~TrainingData() = default;

  // Chooses this rank's samples for the next optimizer step.
  virtual void begin_step() = 0;
  // Samples [offset, offset + count) of this rank's share of the step.
  [[nodiscard]] virtual Batch micro_batch(std::size_t offset, std::size_t count) const = 0;
  // Whether the step just begun was the last of an epoch.
  [[nodiscard]] virtual bool epoch_ended() const = 0;

  virtual void save(ckpt::Snapshot& snapshot) const = 0;
  virtual void load(const ckpt::CheckpointReader& checkpoint) = 0;
};

class TokenData final : public TrainingData {
 public:
  // `global_batch` samples per step over `world` ranks; throws DataError when
  // the split holds fewer than one global batch.
  TokenData(const data::TokenDataset& dataset, std::uint64_t global_batch, int rank, int world, std::uint64_t seed,
            model::Objective objective, data::MlmMasking masking);

  void begin_step() override;
  [[nodiscard]] Batch micro_batch(std::size_t offset, std::size_t count) const override;
  [[nodiscard]] bool epoch_ended() const override { return sampler_.state().step == sampler_.steps_per_epoch(); }
  // The sampler's position: attributes epoch and sampler_step.
  void save(ckpt::Snapshot& snapshot) const override;
  void load(const ckpt::CheckpointReader& checkpoint) override;

 private:
  const data::TokenDataset& dataset_;
  data::DistributedSampler sampler_;
  model::Objective objective_;
  data::MlmMasking masking_;
  std::vector<std::uint64_t> indices_;
  std::uint64_t epoch_ = 0;  // of the step begun (MLM masking varies with it)
};

class RandomTokens final : public TrainingData {
 public:
  RandomTokens(std::int64_t vocab_size, std::int64_t seq_len, std::uint64_t seed);

  void begin_step() override {}
  [[nodiscard]] Batch micro_batch(std::size_t offset, std::size_t count) const override;
  [[nodiscard]] bool epoch_ended() const override { return false; }
  void save(ckpt::Snapshot& /*snapshot*/) const override {}
  void load(const ckpt::CheckpointReader& /*checkpoint*/) override {}

 private:
  std::int64_t vocab_size_;
  std::int64_t seq_len_;
  mutable at::Generator generator_;
};

}  // namespace hpctrain::train
