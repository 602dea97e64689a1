// ZeRO-1's optimizer: this rank's 1/N of AdamW. DDP's buckets are padded to a
// multiple of the world size N and cut into N equal shards; rank r owns shard
// r of every bucket: the reduce-scatter leaves it that shard's summed
// gradients, it keeps AdamW's moments for those elements only and updates
// those weights, and an allgather then gives every rank the whole bucket.
// A shard may start or end inside a parameter, so each shard is a list of
// segments, one per parameter it overlaps, each stepped with its parameter's
// group options (learning rate, weight decay) and step count.
//
// In checkpoints the state is the whole AdamW state in the model's parameter
// order, the same as DDP's: the shards are gathered to rank 0 to save and cut
// again from the whole on load, so a checkpoint continues at any world size,
// with or without ZeRO-1.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "comm/communicator.h"
#include "model/language_model.h"
#include "optim/optimizer.h"

namespace hpctrain::reduce {

// One DDP bucket as ZeRO-1 sees it: its parameters (indices into the model's
// parameters, in bucket order) and the elements of one shard.
struct BucketLayout {
  std::vector<std::size_t> params;
  std::int64_t shard_numel = 0;  // padded bucket = world size * shard_numel
};

// The shard size of a bucket of `numel` elements over `world` ranks.
std::int64_t shard_numel(std::int64_t numel, int world);

class OptimizerShard {
 public:
  OptimizerShard(std::vector<BucketLayout> buckets, const model::LanguageModel& model, optim::AdamW& optimizer,
                 int rank);

  // The sum of the squared gradients in this rank's shards (grads[b]: bucket
  // b's reduced shard, shard_numel elements; the padding holds zeros), in
  // double: the caller sums it over the ranks for the global norm.
  [[nodiscard]] double squared_norm(const std::vector<at::Tensor>& grads) const;
  // One AdamW step of this rank's shards: grads[b] as above, weights[b]
  // bucket b's padded weight buffer, of which this rank's shard is updated.
  void step(const std::vector<at::Tensor>& grads, const std::vector<at::Tensor>& weights, float grad_scale);

  // Collective over `comm` (its rank is this shard's): the whole AdamW state
  // on rank 0, an empty one elsewhere.
  [[nodiscard]] optim::AdamState gather(comm::Communicator& comm) const;
  // This rank's moments as they lie in its shards, for a sharded checkpoint:
  // one piece per segment, host copies. Every rank holds the step counts.
  struct Piece {
    std::size_t param;
    std::int64_t first;  // element within the flattened parameter
    at::Tensor exp_avg;
    at::Tensor exp_avg_sq;
  };
  [[nodiscard]] std::vector<Piece> pieces() const;
  [[nodiscard]] const std::vector<std::int64_t>& steps() const { return steps_; }
  // Takes this rank's shard of a whole state (every rank passes the whole).
  void load(const optim::AdamState& whole);

  // Bytes of optimizer state this rank holds: the two moments of its shards.
  [[nodiscard]] std::int64_t state_bytes() const;

 private:
  struct Segment {
    std::size_t param;
    std::int64_t param_offset;  // first element within the parameter
    std::int64_t shard_offset;  // first element within the shard
    std::int64_t length;
  };
  struct Bucket {
    BucketLayout layout;
    std::vector<Segment> segments;
    at::Tensor exp_avg;  // shard_numel elements each
    at::Tensor exp_avg_sq;
  };

  std::vector<Bucket> buckets_;
  std::vector<at::Tensor> params_;     // for shapes and devices
  std::vector<std::size_t> group_of_;  // parameter -> optimizer param group
  std::vector<std::int64_t> steps_;    // per parameter, as AdamW counts them
  optim::AdamW& optimizer_;
  int rank_;
};

}  // namespace hpctrain::reduce
