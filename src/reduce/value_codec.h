// How values travel, apart from the collective that moves them (as PyTorch's
// c10d keeps a communication hook's compression apart from the allreduce):
// a codec turns rows of fp32 values into bytes and back. Every lossy
// exchange in hpctrain goes through one: DDP's gradient buckets
// (parallel.gradient_wire), DDAP's synchronous steps (parallel.sync_wire) and
// DDAP's merges (parallel.merge_wire), each carried by the same collective
// (encoded_mean_wire.h) with the same error feedback.
//   bf16  each value rounded to bfloat16 (round to nearest even): half of
//         fp32's bytes.
//   int8  each block of kQuantBlock values as one fp32 scale (max |x| / L,
//         L = 2^(bits-1) - 1) and the values round(x / scale) in [-L, L]:
//         about a quarter of fp32's bytes;
//   int4  the same in [-7, 7], two to a byte: 7.5x fewer bytes than fp32;
//   int2  in {-1, 0, 1}, four to a byte: 14x fewer. A value rounds to 0
//         unless it is at least half its block's largest, so most of each
//         send waits in the residual: the error feedback is what carries it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>

#include "config/parallel_config.h"

namespace hpctrain::reduce {

class ValueCodec {
 public:
  virtual ~ValueCodec() = default;
  ValueCodec(const ValueCodec&) = delete;
  ValueCodec& operator=(const ValueCodec&) = delete;

  // "bf16", "int8", ...
  [[nodiscard]] virtual std::string name() const = 0;
  // Rows hold whole units: values per scale, or 1.
  [[nodiscard]] virtual std::int64_t unit() const = 0;
  // `x`: [rows, n] fp32, n a multiple of unit(); its bytes, [rows, row bytes] uint8.
  [[nodiscard]] virtual at::Tensor encode(const at::Tensor& x) const = 0;
  // `rows` rows of `n` values back from their bytes: [rows * n] fp32.
  [[nodiscard]] virtual at::Tensor decode(const at::Tensor& bytes, std::int64_t rows, std::int64_t n) const = 0;

 protected:
  ValueCodec() = default;
};

// The codec `kind` names (bf16, int8, int4 or int2; fp32 needs none).
std::unique_ptr<ValueCodec> make_value_codec(config::WireCodec kind);

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

}  // namespace hpctrain::reduce
