// ZeRO-1's exchange: each bucket, padded to a multiple of the world size N,
// sum-reduce-scattered so that rank r receives shard r of the sum, in fp32
// or through bf16 copies (gradient_wire.h). The bytes one allreduce moves
// are split between this reduce-scatter and the allgather of the updated
// weights after the optimizer's step (optimizer_shard.h).
#pragma once

#include <vector>

#include "reduce/gradient_wire.h"

namespace hpctrain::reduce {

class ReduceScatterWire final : public GradientWire {
 public:
  ReduceScatterWire(comm::Communicator& comm, bool bf16) : comm_(comm), bf16_(bf16) {}

  [[nodiscard]] std::string describe() const override { return bf16_ ? "bf16 reduce-scatter" : "fp32 reduce-scatter"; }
  [[nodiscard]] std::int64_t padded_numel(std::int64_t numel) const override;
  void add_bucket(const at::Tensor& flat) override;
  void reduce(std::size_t bucket) override;
  [[nodiscard]] const at::Tensor& summed(std::size_t bucket) const override { return buckets_[bucket].shard; }

 private:
  struct Bucket {
    at::Tensor flat;        // the gradients, padded
    at::Tensor wire;        // bf16: the copy that travels
    at::Tensor shard;       // this rank's shard of the sum, fp32
    at::Tensor shard_wire;  // bf16: the shard as it arrives
  };
  comm::Communicator& comm_;
  bool bf16_;
  std::vector<Bucket> buckets_;
};

}  // namespace hpctrain::reduce
