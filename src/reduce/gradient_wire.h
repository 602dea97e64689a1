// What goes on the wire for DDP's gradient buckets, kept apart from the
// bucket engine that decides when a bucket goes (ddp_reducer.h), as PyTorch's
// c10d keeps its Reducer apart from its communication hooks. A strategy owns
// the wire buffers of every bucket and leaves the summed gradients where the
// optimizer reads them:
//
//   allreduce       every rank ends with the whole sum, in the bucket's own
//                   buffer (DDP);
//   reduce-scatter  the bucket is padded to a multiple of the world size N
//                   and rank r ends with shard r of the sum, 1/N of it
//                   (ZeRO-1, whose optimizer steps only that shard:
//                   optimizer_shard.h);
//
// each in fp32, or in bf16 (half the bytes; the sum is rounded to bf16);
//   encoded         bf16, int8, int4 or int2 with error feedback, through the codec
//                   DDAP's merges use (encoded_gradient_wire.h), allreduce
//                   only.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "config/parallel_config.h"

namespace hpctrain::reduce {

class GradientWire {
 public:
  virtual ~GradientWire() = default;
  GradientWire(const GradientWire&) = delete;
  GradientWire& operator=(const GradientWire&) = delete;

  // For the reducer's log line, e.g. "bf16 allreduce".
  [[nodiscard]] virtual std::string describe() const = 0;
  // Elements of a bucket's flat gradient buffer holding `numel` gradients,
  // padding included (the padding stays zero).
  [[nodiscard]] virtual std::int64_t padded_numel(std::int64_t numel) const = 0;
  // Registers the next bucket's flat gradient buffer (padded_numel elements),
  // in bucket order.
  virtual void add_bucket(const at::Tensor& flat) = 0;
  // Sums bucket `bucket`'s gradients over the ranks. One thread at a time,
  // and buckets in the same order on every rank.
  virtual void reduce(std::size_t bucket) = 0;
  // Where bucket `bucket`'s sum lies after reduce(): the whole flat buffer
  // (allreduce), or this rank's shard of it (reduce-scatter).
  [[nodiscard]] virtual const at::Tensor& summed(std::size_t bucket) const = 0;
  // A lossy codec's error feedback: what this rank's sends have left out so
  // far, every bucket's in bucket order, fp32 and flat (undefined where the
  // wire keeps none, or nothing is owed yet); a checkpoint keeps it.
  [[nodiscard]] virtual at::Tensor residual() const { return {}; }
  virtual void set_residual(const at::Tensor& /*residual*/) {}

 protected:
  GradientWire() = default;
};

// The strategy [parallel] asks for (zero, bf16_compression, gradient_wire), over `comm`.
std::unique_ptr<GradientWire> make_gradient_wire(const config::ParallelConfig& parallel, comm::Communicator& comm);

}  // namespace hpctrain::reduce
