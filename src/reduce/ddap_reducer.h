// DDAP, the asynchronous reducer (after the "Asynchronous LLM Training" design
// in docs/reducers.md): ranks take local optimizer steps with no
// communication, and every H steps (and at each epoch end) merge their
// replicas against the shared anchor with a MergeRule.
//
// blocking:   at step t, M from Δᵢ = θᵢ(t) − anchor; anchor ← next_anchor;
//             θᵢ ← anchor. (The original design's behaviour.)
// overlapped: at step t, each rank keeps θᵢ(t) and starts the merge on a
//             background thread over a communicator of its own; training goes
//             on; at step t + k the merge is complete and
//             anchor ← next_anchor,  θᵢ ← anchor + (θᵢ(t + k) − θᵢ(t)),
//             keeping the local progress made while the merge was in flight.
//             With k = 0 this is the blocking rule.
// merge_moments: the optimizer's moments are averaged at the same points,
//             by the same rule: m ← mean(m(t)) + (m(t + k) − m(t)); the second
//             moments are clamped at zero afterwards (the correction can take a
//             rank whose own second moment was above the mean below zero).
// merge_wire: how the outer gradients travel (merge_wire.h): fp32, or int8,
//             int4 or int2 with error feedback: each rank adds what its last
//             merge's rounding left out (its residual) to its next merge's Δ.
// merge_fragments: streaming: the flat parameters in P fragments, each merged
//             every H steps on a staggered schedule, one fragment every H/P
//             steps (merge_fragments.h); a merge moves only its fragment's
//             anchor, outer momentum, residual and replica slice. An epoch's
//             end and the end of training merge the whole model.
// sync_steps: the first N steps are synchronous: every rank's gradients are
//             summed before the optimizer step, as DDP's are, so the replicas
//             stay one model and the anchor follows it; the local steps and
//             merges begin after step N, H counted from there (post-local SGD:
//             local steps lose least once the model is past its first phase).
// sync_wire:  how those steps' gradients travel: fp32 (one allreduce), or
//             bf16, int8, int4 or int2 through the merge wires' codecs, with error
//             feedback: each rank adds what its last step's rounding left
//             out to its next step's gradient; the residual is dropped when
//             the synchronous steps end.
// Deterministic: M is a pure function of the Δᵢ, whatever the timing.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <future>
#include <vector>

#include "comm/communicator.h"
#include "model/language_model.h"
#include "reduce/merge_fragments.h"
#include "reduce/merge_wire.h"
#include "reduce/model_merge.h"
#include "reduce/reducer.h"

namespace hpctrain::reduce {

// What a checkpoint keeps of DDAP. An overlapped merge in flight is waited
// for and kept with its result, to be applied at the step it was due.
struct DdapState {
  at::Tensor anchor;
  at::Tensor momentum;  // diloco; undefined before the first diloco merge
  std::int64_t merges = 0;
  std::int64_t last_step = 0;
  std::int64_t last_merge_applied_for = -1;
  std::int64_t started_at = -1;  // >= 0: a merge in flight, started at this step
  FlatRange merging;             // the part of the flat parameters it merges
  at::Tensor theta_at_start;     // this rank's replica (that part) when it started
  at::Tensor merged;             // its result M (that part)
  at::Tensor moments_at_start;   // merge_moments: this rank's moments (flat) then
  at::Tensor merged_moments;     // and their mean over ranks
  at::Tensor residual;           // this rank's error feedback for its next merge; undefined: none
  at::Tensor sync_residual;      // the same for its next synchronous step's gradients (sync_wire)
  std::int64_t merge_bytes = 0;  // what the merge in flight sent (the reported byte count)
};

// The part of the n flat parameters a checkpoint's merge in flight merges:
// its attributes ddap_merge_begin and ddap_merge_end (format 7 on), else the
// whole model. Throws CheckpointError when they do not name a part of it.
FlatRange merge_in_flight_range(const ckpt::CheckpointReader& checkpoint, std::int64_t n);

class DdapReducer final : public Reducer {
 public:
  // Merges go over `merges` (owned when `owned`), which nobody else may use
  // while a merge is in flight; checkpoints gather the replicas over
  // `control`, a CPU communicator. Every rank starts from rank 0's weights.
  DdapReducer(const config::ParallelConfig& parallel, model::LanguageModel& model, optim::AdamW& optimizer,
              comm::Communicator& merges, comm::Communicator& control,
              std::unique_ptr<comm::Communicator> owned = nullptr);
  ~DdapReducer() override;

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::string backend() const override { return comm_.backend(); }
  // Counted when a merge is applied (and after a synchronous step), so that
  // an overlapped merge's bytes count at the step it lands, whatever the
  // timing of its thread: the same figures on every run, resumed or not.
  [[nodiscard]] std::uint64_t bytes_sent() const override { return reported_bytes_; }
  // Gradients start undefined, so backward writes them instead of adding to zeros.
  void begin_step() override;
  void micro_step(bool /*last*/) override {}
  [[nodiscard]] bool gradients_summed_over_ranks() const override { return synchronous(); }
  // In the synchronous steps: sums the gradients over the ranks.
  void end_backward() override;
  // After optimizer step `step` (1-based). Starts a merge every H steps and at
  // an epoch's end; applies an overlapped merge k steps after it started.
  void after_optimizer_step(std::int64_t step, bool epoch_end) override;
  // End of training: applies any merge in flight, then merges the final
  // replicas (blocking) unless the last step just did, so every rank ends with
  // the same weights.
  void finish() override;
  [[nodiscard]] std::string summary() const override { return "ddap: " + std::to_string(merges_) + " merges"; }
  // What a DDAP evaluation measures: the anchor, the model of the last merge
  // (the same on every rank, what a checkpoint's /model holds and `ckpt
  // export` ships), not the unmerged replicas.
  [[nodiscard]] at::Tensor evaluation_weights() const override { return anchor_.clone(); }
  void with_evaluation_weights(const std::function<void()>& evaluate) override { with_weights(anchor_, evaluate); }
  // Every rank's replica, AdamW state and merge in flight go to rank 0 (each
  // rank broadcasts its own in turn); /model holds the anchor.
  void save(ckpt::Snapshot& snapshot) override;
  // Each rank takes back its own replica; at another world size every rank
  // starts from the replicas' merge instead (reduce/ddap_reshard.h).
  void load(const ckpt::CheckpointReader& checkpoint) override;
  [[nodiscard]] std::vector<std::string> incompatibilities(const ckpt_file::CheckpointInfo& info) const override;
  [[nodiscard]] std::string on_other_world_size() const override {
    return "every rank starts from the merge of its replicas, with their mean AdamW moments";
  }

  // Waits for a merge in flight (collective over the merge communicator).
  [[nodiscard]] DdapState state();
  void restore(const DdapState& state);
  [[nodiscard]] std::int64_t merges() const { return merges_; }

 private:
  // A one-file checkpoint: every rank's replica broadcast in turn, kept by rank 0.
  void gather_replicas(ckpt::Snapshot& s, const DdapState& d);
  // The step under way (last_step_ + 1) is one of the first sync_steps.
  [[nodiscard]] bool synchronous() const { return last_step_ < parallel_.sync_steps; }
  struct Merged {
    at::Tensor delta;    // M
    at::Tensor moments;  // the mean of the ranks' moments, with merge_moments
  };
  static std::future<Merged> ready(Merged merged);

  // Starts the merge of `range` of the replicas as they are at `step`: on a
  // thread of its own when `overlapped`, else done on return.
  void start(std::int64_t step, FlatRange range, bool overlapped);
  void apply();

  config::ParallelConfig parallel_;
  MergeRule rule_;
  MergeFragments fragments_;
  std::unique_ptr<MergeWire> wire_;
  std::unique_ptr<MergeWire> sync_wire_;  // a quantized sync_wire; null: fp32, one allreduce
  bool overlapped_;                       // merge_mode: the merges during training
  std::unique_ptr<comm::Communicator> owned_;
  comm::Communicator& comm_;
  comm::Communicator& control_;
  at::Tensor anchor_;
  at::Tensor momentum_;  // diloco's outer momentum
  at::Tensor residual_;  // what this rank's last merge left unsent (a lossy wire; undefined before its first merge)
  at::Tensor sync_residual_;  // what its last synchronous step's gradients left unsent (a quantized sync_wire)
  std::int64_t merges_ = 0;
  // The byte count: reported_bytes_ so far; comm_.bytes_sent() when last
  // counted; what the merge in flight sent before a checkpoint (restored).
  void count_bytes();
  std::uint64_t reported_bytes_ = 0;
  std::uint64_t seen_bytes_ = 0;
  std::uint64_t restored_merge_bytes_ = 0;
  std::int64_t last_step_ = 0;
  std::int64_t last_merge_applied_for_ = -1;  // the step whose state the anchor holds (its last whole merge)
  // The merge in flight.
  std::int64_t started_at_ = -1;
  FlatRange merging_;
  at::Tensor theta_at_start_;
  at::Tensor moments_at_start_;
  std::future<Merged> merged_;
};

}  // namespace hpctrain::reduce
