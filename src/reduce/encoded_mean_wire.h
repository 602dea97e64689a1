// The collective every encoded exchange uses (DDP's buckets with a
// parallel.gradient_wire, DDAP's synchronous steps and merges with a
// sync_wire or merge_wire): the mean over the ranks of their values, carried
// in the two stages of a ring allreduce, each encoded by a codec
// (value_codec.h: bf16, int8, int4 or int2):
//  1. each rank encodes its values, cut into W chunks of whole codec units,
//     and chunk r goes to rank r (alltoall);
//  2. rank r decodes the W copies of its chunk, sums them in rank order,
//     divides by W and encodes that mean the same way;
//  3. the encoded means go to every rank (allgather), which decodes them:
//     every rank holds the same M, bit for bit, whatever the backend.
// Per exchange a rank sends 2(W-1)/W of the encoded bytes, against 2(W-1)/W
// of 4n for fp32: 2x fewer for bf16, 3.9x for int8, 7.5x for int4, 14.2x
// for int2. Stage 1's rounding is this rank's residual (error feedback: the
// caller adds it to its next exchange's values); stage 2's is the same on
// every rank, at most half a step of the mean's own encoding, and is not
// fed back.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

#include "reduce/merge_wire.h"
#include "reduce/value_codec.h"

namespace hpctrain::reduce {

class EncodedMeanWire final : public MergeWire {
 public:
  EncodedMeanWire(int ranks, std::unique_ptr<ValueCodec> codec);
  [[nodiscard]] std::string describe() const override;
  // The payload is ranks x (one chunk's bytes), as the codec writes them.
  [[nodiscard]] Outgoing encode(const at::Tensor& values) const override;
  [[nodiscard]] at::Tensor merge(const at::Tensor& payload, std::int64_t numel,
                                 comm::Communicator& comm) const override;

 private:
  // Values per chunk for `numel` values: whole codec units, W chunks covering them.
  [[nodiscard]] std::int64_t chunk_numel(std::int64_t numel) const;

  int ranks_;
  std::unique_ptr<ValueCodec> codec_;
};

}  // namespace hpctrain::reduce
