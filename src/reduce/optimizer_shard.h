// ZeRO-1's optimizer: this rank's 1/N of AdamW. DDP's buckets are padded to a
// multiple of the world size N and cut into N equal shards; rank r owns shard
// r of every bucket: the reduce-scatter leaves it that shard's summed
// gradients (reduce_scatter_wire.h), it keeps AdamW's moments for those
// elements only and updates those weights, and an allgather then gives every
// rank the whole bucket. The parameters are views into padded weight buffers,
// one per bucket, for that allgather to write in place.
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

#include "ckpt/checkpoint.h"
#include "comm/communicator.h"
#include "model/language_model.h"
#include "optim/grad_clip.h"
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
  // Moves each bucket's parameters into a padded weight buffer (the same
  // values; each parameter becomes a view into it). The weights are
  // allgathered over `comm`; the gradient norm is summed over `control`, a
  // CPU communicator.
  OptimizerShard(std::vector<BucketLayout> buckets, model::LanguageModel& model, optim::AdamW& optimizer,
                 comm::Communicator& comm, comm::Communicator& control);

  // Clips by the global gradient norm (0: no clipping), steps this rank's
  // shards and allgathers every bucket's weights. grads[b]: bucket b's summed
  // shard, shard_numel elements (the padding holds zeros).
  optim::GradClip step(const std::vector<at::Tensor>& grads, double max_norm);

  // Collective. A one-file checkpoint holds the whole AdamW state in the
  // model's parameter order, DDP's layout (gathered to rank 0); a sharded one
  // each rank's share of the weights and the moments it holds, as pieces.
  void save(ckpt::Snapshot& snapshot) const;
  // Every rank reads the whole state and keeps its shard: any world size,
  // with or without ZeRO-1 before, continues.
  void load(const ckpt::CheckpointReader& checkpoint);

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
    at::Tensor weights;  // the bucket's parameters live here, padded
    at::Tensor exp_avg;  // shard_numel elements each
    at::Tensor exp_avg_sq;
  };
  // One piece of a sharded checkpoint: a segment's moments, host copies.
  struct Piece {
    std::size_t param;
    std::int64_t first;  // element within the flattened parameter
    at::Tensor exp_avg;
    at::Tensor exp_avg_sq;
  };

  // The sum of the squared gradients in this rank's shards, in double.
  [[nodiscard]] double squared_norm(const std::vector<at::Tensor>& grads) const;
  void adam_step(const std::vector<at::Tensor>& grads, float grad_scale);
  void allgather_weights();
  // The whole AdamW state on rank 0 of comm_, an empty one elsewhere.
  [[nodiscard]] optim::AdamState gather() const;
  [[nodiscard]] std::vector<Piece> pieces() const;
  // Takes this rank's shard of a whole state (every rank passes the whole).
  void load(const optim::AdamState& whole);

  std::vector<Bucket> buckets_;
  model::LanguageModel& model_;
  std::vector<at::Tensor> params_;     // for shapes and devices
  std::vector<std::size_t> group_of_;  // parameter -> optimizer param group
  std::vector<std::int64_t> steps_;    // per parameter, as AdamW counts them
  optim::AdamW& optimizer_;
  comm::Communicator& comm_;
  comm::Communicator& control_;
  int rank_;
};

}  // namespace hpctrain::reduce
