// The reducer: how the ranks' replicas of the model stay one model
// (docs/reducers.md). The trainer calls these hooks in this order and never
// asks which reducer it has:
//
//   begin_step()                       before a step's first micro-step
//   micro_step(last) ... backward      once per micro-step; last for the step's last
//   end_backward()                     after the last backward
//   optimizer_step(lr, clip)           at this learning rate, clipped by the global gradient norm
//   after_optimizer_step(step, end)    step counted from 1; end: an epoch ended
//   finish()                           after the last step
//
// Before backward, each micro-step's mean loss is scaled so that the
// gradients become the mean over the samples they stand for: the whole global
// batch where backward's gradients are summed over the ranks
// (gradients_summed_over_ranks(): DDP, ZeRO-1), else the rank's own share
// (DDAP's replicas, one rank). The reducer steps the optimizer, since only it
// knows where the summed gradients lie (whole on every rank, or a shard per
// rank under ZeRO-1). save() and load() put the model, the optimizer's state
// and the reducer's own state in a checkpoint, since only the reducer knows
// how the replicas relate (one shared replica for DDP; one per rank and an
// anchor for DDAP; a shard of the optimizer per rank for a sharded optimizer).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "model/language_model.h"
#include "optim/grad_clip.h"
#include "optim/optimizer.h"

namespace hpctrain::reduce {

class Reducer {
 public:
  virtual ~Reducer() = default;
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // One line for the log: what this reducer does.
  [[nodiscard]] virtual std::string describe() const = 0;
  // The backend the gradients or merges travel over ("mpi", "nccl", or "none").
  [[nodiscard]] virtual std::string backend() const = 0;
  // Bytes this rank has sent for the reducer so far (gradients, shards,
  // merges; comm/communicator.h's nominal count), checkpoints' traffic apart.
  [[nodiscard]] virtual std::uint64_t bytes_sent() const { return 0; }

  virtual void begin_step() = 0;
  virtual void micro_step(bool last) = 0;
  [[nodiscard]] virtual bool gradients_summed_over_ranks() const = 0;
  virtual void end_backward() = 0;
  // Sets the learning rate to `lr`, clips the gradients by their global L2
  // norm to `max_norm` (0: no clipping) inside AdamW's pass, and steps.
  optim::GradClip optimizer_step(double lr, double max_norm);
  virtual void after_optimizer_step(std::int64_t step, bool epoch_end) = 0;
  virtual void finish() = 0;
  // After finish(): what the reducer did over the run, for the log ("" for nothing to say).
  [[nodiscard]] virtual std::string summary() const { return {}; }

  // The weights an evaluation measures and a user would ship, as one flat
  // fp32 vector in parameter order on the model's device, the same on every
  // rank: the model under DDP; under DDAP the anchor, the last merged model.
  [[nodiscard]] virtual at::Tensor evaluation_weights() const;
  // Runs `evaluate` with the model holding evaluation_weights(), then puts
  // the training weights back bit for bit: evaluating never changes training.
  virtual void with_evaluation_weights(const std::function<void()>& evaluate) { evaluate(); }
  // Runs `evaluate` with the model holding `flat` (evaluation_weights()'s
  // layout), then puts the training weights back bit for bit.
  void with_weights(const at::Tensor& flat, const std::function<void()>& evaluate);

  // Collective: every rank calls it; rank 0's snapshot is the one written.
  virtual void save(ckpt::Snapshot& snapshot) = 0;
  virtual void load(const ckpt::CheckpointReader& checkpoint) = 0;
  // Why a checkpoint written as `info` cannot continue under this reducer (empty: it can).
  [[nodiscard]] virtual std::vector<std::string> incompatibilities(const ckpt_file::CheckpointInfo& info) const = 0;
  // What load() does with a checkpoint written at another world size, for
  // the log ("" when the replicas simply continue).
  [[nodiscard]] virtual std::string on_other_world_size() const { return {}; }

 protected:
  Reducer(model::LanguageModel& model, optim::AdamW& optimizer) : model_(model), optimizer_(optimizer) {}
  // The step itself, the learning rate set: by default the whole model's
  // AdamW step on every rank. Reducers that shard the optimizer step their
  // shard and gather the result.
  virtual optim::GradClip step_optimizer(double max_norm);

  model::LanguageModel& model_;
  optim::AdamW& optimizer_;
};

// The reducer [parallel] asks for, over the world's ranks: DDP (or, on one
// rank, the same arithmetic with nothing to communicate) or DDAP. Gradients
// and merges travel over NCCL when the model is on a GPU, over MPI otherwise.
// Every rank starts from rank 0's weights.
std::unique_ptr<Reducer> make_reducer(const config::ParallelConfig& parallel, model::LanguageModel& model,
                                      optim::AdamW& optimizer, comm::World& world);

}  // namespace hpctrain::reduce
