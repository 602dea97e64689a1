// Where a step's batches come from. TokenData reads the prepared data set:
// the distributed sampler picks this rank's samples for each optimizer step,
// and each micro-step takes its slice of them as a Batch (MLM-masked for a
// masked model). RandomTokens draws uniform tokens, for the benches, which
// time the trainer's own step on any model shape without a data set.
// Each saves and loads its position in a checkpoint.
//
// TokenData reads a step's samples before the step begins, and can read
// steps ahead: a shard that shrinks under a run (a `cp` over it) is then
// found at a step boundary, where the trainer can still checkpoint what it
// has and stop (trainer.cpp) rather than fail half-way through a step.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
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

  // Chooses this rank's samples for the next optimizer step (reading them
  // now unless read_ahead did); throws DataError where they cannot be read.
  virtual void begin_step() = 0;
  // Reads the samples of the next `steps` steps not begun yet, returning the
  // first read's error (the data set's message, naming the shard), if any.
  [[nodiscard]] virtual std::optional<std::string> read_ahead(std::size_t /*steps*/) { return std::nullopt; }
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
  [[nodiscard]] std::optional<std::string> read_ahead(std::size_t steps) override;
  [[nodiscard]] Batch micro_batch(std::size_t offset, std::size_t count) const override;
  [[nodiscard]] bool epoch_ended() const override { return taken_.step == sampler_.steps_per_epoch(); }
  // The sampler's position: attributes epoch and sampler_step.
  void save(ckpt::Snapshot& snapshot) const override;
  void load(const ckpt::CheckpointReader& checkpoint) override;

 private:
  const data::TokenDataset& dataset_;
  data::DistributedSampler sampler_;
  model::Objective objective_;
  data::MlmMasking masking_;
  // One step's share: drawn from the sampler, then read.
  struct StepSamples {
    std::vector<std::uint64_t> indices;
    std::uint64_t epoch = 0;   // MLM masking varies with it
    data::SamplerState after;  // the sampler's position once the step is taken
    at::Tensor samples;        // [indices, T + 1]; undefined until read
  };
  [[nodiscard]] StepSamples draw();
  void read(StepSamples& step) const;

  std::deque<StepSamples> ahead_;  // drawn, not begun (the sampler is past them)
  StepSamples current_;            // the step begun
  data::SamplerState taken_;       // position after the step begun: what a checkpoint holds
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
