// DDP on one rank: the same arithmetic as DdpReducer (the loss divided by a
// world of 1, gradients accumulated over micro-steps, one optimizer step),
// with nothing to communicate, so no buckets, no hooks and no thread. The
// gradients start each step undefined, and the first backward writes them
// instead of adding to zeros: the same bits, one pass fewer.
#pragma once

#include "reduce/reducer.h"

namespace hpctrain::reduce {

class LocalReducer final : public Reducer {
 public:
  LocalReducer(model::LanguageModel& model, optim::AdamW& optimizer) : Reducer(model, optimizer) {}

  [[nodiscard]] std::string describe() const override { return "reducer ddp: one rank, nothing to reduce"; }
  [[nodiscard]] std::string backend() const override { return "none"; }
  void begin_step() override;
  void micro_step(bool /*last*/) override {}
  [[nodiscard]] bool gradients_summed_over_ranks() const override { return false; }
  void end_backward() override {}
  void after_optimizer_step(std::int64_t /*step*/, bool /*epoch_end*/) override {}
  void finish() override {}
  void save(ckpt::Snapshot& snapshot) override;
  void load(const ckpt::CheckpointReader& checkpoint) override;
  [[nodiscard]] std::vector<std::string> incompatibilities(const ckpt_file::CheckpointInfo& info) const override;
};

}  // namespace hpctrain::reduce
