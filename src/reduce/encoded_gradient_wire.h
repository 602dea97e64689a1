// DDP's gradient buckets through a codec (parallel.gradient_wire = "bf16",
// "int8", "int4" or "int2": value_codec.h) and the collective DDAP's merges
// and synchronous steps use (encoded_mean_wire.h: an alltoall of the encoded
// chunks, their mean encoded again, an allgather), as PyTorch DDP's
// communication hooks compress a bucket apart
// from the bucket engine (ddp_reducer.h). Error feedback, bucket by bucket:
// what a step's rounding leaves out of this rank's gradients (its residual)
// is added to the same bucket's gradients of the next step, so no part of a
// gradient is lost, only delayed. The codec carries the ranks' mean; the
// bucket receives it times the world size, the sum DDP's loss scale expects
// (ddp_reducer.h). The residuals are each rank's own state and are
// checkpointed (ddp_residuals.h).
#pragma once

#include <memory>
#include <vector>

#include "reduce/gradient_wire.h"
#include "reduce/merge_wire.h"

namespace hpctrain::reduce {

class EncodedGradientWire final : public GradientWire {
 public:
  EncodedGradientWire(comm::Communicator& comm, config::WireCodec kind);

  [[nodiscard]] std::string describe() const override;
  [[nodiscard]] std::int64_t padded_numel(std::int64_t numel) const override { return numel; }
  void add_bucket(const at::Tensor& flat) override;
  void reduce(std::size_t bucket) override;
  [[nodiscard]] const at::Tensor& summed(std::size_t bucket) const override { return buckets_[bucket].flat; }
  [[nodiscard]] at::Tensor residual() const override;
  void set_residual(const at::Tensor& residual) override;

 private:
  struct Bucket {
    at::Tensor flat;      // the gradients, and their sum afterwards
    at::Tensor residual;  // what this rank's last send of them left out (undefined: nothing yet)
  };
  comm::Communicator& comm_;
  std::unique_ptr<MergeWire> codec_;
  std::vector<Bucket> buckets_;
};

}  // namespace hpctrain::reduce
