// DDAP's quantized merge wires (parallel.merge_wire = "int8", "int4" or "int2"): the
// mean over the ranks of their outer gradients, carried in the two stages of
// a ring allreduce, each quantized to `bits` bits a value:
//  1. each rank quantizes its values in blocks of kQuantBlock: one fp32
//     scale (max |x| / L, L = 2^(bits-1) - 1: 127 for int8, 7 for int4, 1
//     for int2) and kQuantBlock values round(x / scale) in [-L, L], two to a
//     byte for int4, four for int2; the values are cut into W chunks of whole blocks and chunk r goes
//     to rank r (alltoall);
//  2. rank r dequantizes the W copies of its chunk, sums them in rank order,
//     divides by W and quantizes that mean the same way;
//  3. the quantized means go to every rank (allgather), which dequantizes
//     them: every rank holds the same M, bit for bit.
// Per merge a rank sends 2(W-1)/W of (n * bits / 8 + 4n / kQuantBlock)
// bytes, against 2(W-1)/W of 4n for fp32: 3.9x fewer for int8, 7.5x for
// int4, 14.2x for int2. Stage 1's rounding is this rank's residual (error feedback: the
// reducer adds it to its next merge's values); stage 2's is the same on every
// rank, at most half a step of the mean's own scale, and is not fed back.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "reduce/merge_wire.h"

namespace hpctrain::reduce {

// Values per scale: a scale's 4 bytes add 3% to 128 int8 values (6% to
// int4's 64 bytes, 12% to int2's 32), and a block this small keeps one large value from
// flattening many small ones.
inline constexpr std::int64_t kQuantBlock = 128;

// `x` (fp32, flat, a multiple of kQuantBlock values) quantized to `bits` (8,
// 4 or 2) and back: what a receiver reconstructs.
struct QuantizedBlocks {
  at::Tensor scales;  // fp32, one per block
  at::Tensor values;  // int8 in [-L, L], x's shape (unpacked)
};
QuantizedBlocks quantize_blocks(const at::Tensor& x, int bits);
at::Tensor dequantize_blocks(const QuantizedBlocks& q);

class QuantizedMergeWire final : public MergeWire {
 public:
  QuantizedMergeWire(int ranks, int bits);
  [[nodiscard]] std::string describe() const override;
  // The payload is ranks x (chunk's scales, then its packed values), as bytes.
  [[nodiscard]] Outgoing encode(const at::Tensor& values) const override;
  [[nodiscard]] at::Tensor merge(const at::Tensor& payload, std::int64_t numel,
                                 comm::Communicator& comm) const override;

 private:
  // Values per chunk for `numel` values: whole blocks, W chunks covering them.
  [[nodiscard]] std::int64_t chunk_numel(std::int64_t numel) const;
  // A chunk's bytes on the wire (scales, then values packed) and back, for `rows` rows.
  [[nodiscard]] at::Tensor pack(const QuantizedBlocks& q, std::int64_t rows) const;
  [[nodiscard]] QuantizedBlocks unpack(const at::Tensor& bytes, std::int64_t rows, std::int64_t chunk) const;

  int ranks_;
  int bits_;
};

}  // namespace hpctrain::reduce
