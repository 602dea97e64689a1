// DDP, the synchronous reducer, after PyTorch's C++ Reducer:
//  - parameters go into buckets in reverse registration order (the order
//    backward produces their gradients): a small first bucket, then buckets of
//    up to bucket_cap bytes;
//  - each parameter's .grad is a view into its bucket's flat buffer, so
//    gradients accumulate in place and need no copy;
//  - a hook on each parameter's gradient accumulator marks it ready; a full
//    bucket is handed to a communication thread, which sum-allreduces it while
//    backward goes on (the average's 1/world is folded into the loss scale);
//  - once backward is over, end_backward() takes the remaining buckets over
//    from the communication thread (after the one in flight) and reduces them
//    on the calling thread: no hand-off, and one wake-up rather than one per
//    bucket. One bucket is in flight at a time, taken strictly in index order,
//    so every rank issues the same sequence of collectives whichever thread
//    issues them;
//  - micro_step(false) (no_sync) turns the hooks off for accumulation micro-steps;
//  - what goes on the wire is a strategy of its own (gradient_wire.h):
//    allreduce, or reduce-scatter for ZeRO-1, each in fp32 or bf16;
//  - every parallel.check_replicas_every steps the replicas are compared
//    (replica_check.h).
// With overlap off, the same buckets are reduced after backward: the results
// are bitwise identical, only the timing differs.
//
// ZeRO-1 (parallel.zero = 1): the reduce-scatter leaves rank r the summed
// gradients of shard r of each bucket only, and the optimizer is sharded the
// same way (optimizer_shard.h: AdamW's moments for that shard alone, 1/N of
// DDP's; the updated weights allgathered after the step, not overlapped with
// the next forward).
#pragma once

#include <ATen/core/Tensor.h>

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "model/language_model.h"
#include "reduce/gradient_wire.h"
#include "reduce/optimizer_shard.h"
#include "reduce/reducer.h"

namespace torch::autograd {
struct Node;
}

namespace hpctrain::reduce {

class DdpReducer final : public Reducer {
 public:
  // Broadcasts rank 0's parameters, builds the buckets, installs the hooks.
  // Gradients go over `gradients` (owned when `owned`); the replica check
  // over `control`, a CPU communicator.
  DdpReducer(const config::ParallelConfig& parallel, model::LanguageModel& model, optim::AdamW& optimizer,
             comm::Communicator& gradients, comm::Communicator& control,
             std::unique_ptr<comm::Communicator> owned = nullptr);
  ~DdpReducer() override;

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::string backend() const override { return comm_.backend(); }
  [[nodiscard]] std::uint64_t bytes_sent() const override { return comm_.bytes_sent() - checkpoint_bytes_; }
  // Zeroes the gradients (the bucket buffers).
  void begin_step() override;
  // Reduces during the last micro-step's backward only (no_sync before).
  void micro_step(bool last) override { sync_ = last; }
  // The buckets are summed: the average's division by the world size rides
  // in the loss scale, so no pass over the gradients is spent on it (for a
  // power-of-two world the result is bitwise the sum divided afterwards).
  [[nodiscard]] bool gradients_summed_over_ranks() const override { return true; }
  // Reduces what is left and waits for every bucket.
  void end_backward() override;
  void after_optimizer_step(std::int64_t step, bool epoch_end) override;
  void finish() override {}
  void save(ckpt::Snapshot& snapshot) override;
  void load(const ckpt::CheckpointReader& checkpoint) override;
  [[nodiscard]] std::vector<std::string> incompatibilities(const ckpt_file::CheckpointInfo& info) const override;
  [[nodiscard]] std::string on_other_world_size() const override {
    return parallel_.gradient_wire == config::WireCodec::kFp32
               ? std::string()
               : "the ranks' gradient residuals (error feedback) summed and shared equally by this run's ranks";
  }

  [[nodiscard]] std::size_t bucket_count() const { return buckets_.size(); }
  // Bytes of AdamW moments this rank holds (or, before the first step, will):
  // the whole model's two moments under DDP, this rank's shards under ZeRO-1.
  [[nodiscard]] std::int64_t optimizer_state_bytes() const;
  // Buckets so far handed to the communication thread by the gradient hooks,
  // that is during backward rather than after it.
  [[nodiscard]] std::size_t buckets_launched_during_backward() const { return launched_by_hooks_; }

 private:
  struct Bucket {
    at::Tensor flat;  // fp32, the gradients live here (padded for the wire)
    std::vector<std::size_t> params;
    std::size_t pending = 0;
    bool ready = false;
  };

  void on_gradient_ready(std::size_t param);
  void mark_ready(std::size_t bucket);  // caller holds mutex_
  // Reduces bucket next_to_launch_; `lock` holds mutex_ on entry and on return.
  void reduce_next(std::unique_lock<std::mutex>& lock);
  // A bucket has been taken but not yet reduced (caller holds mutex_).
  [[nodiscard]] bool in_flight() const { return next_to_launch_ > reduced_; }
  void communication_loop();
  // ZeRO-1: clip by the global norm, step this rank's shard, allgather the weights.
  optim::GradClip step_optimizer(double max_norm) override;

  config::ParallelConfig parallel_;
  std::unique_ptr<comm::Communicator> owned_;
  comm::Communicator& comm_;
  comm::Communicator& control_;
  std::uint64_t checkpoint_bytes_ = 0;  // what checkpoints sent over comm_ (not in bytes_sent())
  std::vector<at::Tensor> params_;
  std::vector<std::size_t> bucket_of_;
  std::vector<Bucket> buckets_;
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;  // keeps the hooked nodes alive
  std::unique_ptr<GradientWire> wire_;
  std::unique_ptr<OptimizerShard> shard_;  // ZeRO-1 only
  bool sync_ = true;
  std::size_t launched_by_hooks_ = 0;

  std::mutex mutex_;
  std::condition_variable bucket_ready_;  // wakes the communication thread
  std::condition_variable handed_over_;   // wakes end_backward()
  std::size_t next_to_launch_ = 0;
  std::size_t reduced_ = 0;
  bool finishing_ = false;  // end_backward() reduces what is left
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace hpctrain::reduce
