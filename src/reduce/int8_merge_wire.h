// DDAP's int8 merge wire (parallel.merge_wire = "int8"): the mean over the
// ranks of their outer gradients, carried as int8 in the two stages of a
// ring allreduce, each quantized:
//  1. each rank quantizes its values in blocks of kBlock (one fp32 scale,
//     max |x| / 127, and kBlock values round(x / scale)); the values are cut
//     into W chunks of whole blocks and chunk r goes to rank r (alltoall);
//  2. rank r dequantizes the W copies of its chunk, sums them in rank order,
//     divides by W and quantizes that mean the same way;
//  3. the quantized means go to every rank (allgather), which dequantizes
//     them: every rank holds the same M, bit for bit.
// Per merge a rank sends 2(W-1)/W of n bytes and a scale per block, against
// 2(W-1)/W of 4n for fp32: 3.9x fewer. Stage 1's rounding is this rank's
// residual (error feedback: the reducer adds it to its next merge's values);
// stage 2's is the same on every rank and at most half a step of the mean's
// own scale, and is not fed back.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "reduce/merge_wire.h"

namespace hpctrain::reduce {

// Values per scale: a scale's 4 bytes add 3% to 128 int8 values, and a block
// this small keeps one large value from flattening many small ones.
inline constexpr std::int64_t kInt8Block = 128;

// `x` (fp32, flat, a multiple of kInt8Block values) as int8 blocks and back:
// what a receiver reconstructs.
struct Int8Blocks {
  at::Tensor scales;  // fp32, one per block
  at::Tensor values;  // int8, x's shape
};
Int8Blocks quantize_int8(const at::Tensor& x);
at::Tensor dequantize_int8(const Int8Blocks& q);

class Int8MergeWire final : public MergeWire {
 public:
  explicit Int8MergeWire(int ranks) : ranks_(ranks) {}
  [[nodiscard]] std::string describe() const override { return "int8 (error feedback)"; }
  // The payload is ranks x (chunk's scales, then its int8 values), as bytes.
  [[nodiscard]] Outgoing encode(const at::Tensor& values) const override;
  [[nodiscard]] at::Tensor merge(const at::Tensor& payload, std::int64_t numel,
                                 comm::Communicator& comm) const override;

 private:
  // Values per chunk for `numel` values: whole blocks, W chunks covering them.
  [[nodiscard]] std::int64_t chunk_numel(std::int64_t numel) const;
  int ranks_;
};

}  // namespace hpctrain::reduce
