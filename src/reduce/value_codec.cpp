#include "reduce/value_codec.h"

#include <fmt/format.h>
#include <torch/types.h>

#include <stdexcept>
#include <vector>

namespace hpctrain::reduce {
namespace {

// int4 and int2: 8 / bits values in [-L, L] to a byte, each as its `bits`-bit
// two's complement, the first in the lowest bits.
at::Tensor pack_fields(const at::Tensor& values, int bits) {
  const std::int64_t per_byte = 8 / bits;
  const at::Tensor fields = values.to(torch::kInt16).bitwise_and((1 << bits) - 1).reshape({-1, per_byte});
  at::Tensor packed = torch::zeros({fields.size(0)}, fields.options());
  for (std::int64_t j = 0; j < per_byte; ++j) packed += fields.select(1, j) * (1 << (bits * j));
  return packed.to(torch::kUInt8);
}

at::Tensor unpack_fields(const at::Tensor& bytes, int bits) {
  const std::int64_t per_byte = 8 / bits;
  const std::int64_t sign_bit = std::int64_t{1} << (bits - 1);
  const at::Tensor b = bytes.to(torch::kInt16);
  std::vector<at::Tensor> fields;
  for (std::int64_t j = 0; j < per_byte; ++j) {
    // A field f is the signed value (f ^ 2^(bits-1)) - 2^(bits-1).
    const at::Tensor f = b.div(std::int64_t{1} << (bits * j), "floor").bitwise_and((1 << bits) - 1);
    fields.push_back(f.bitwise_xor(sign_bit) - sign_bit);
  }
  return torch::stack(fields, 1).reshape({-1}).to(torch::kInt8);
}

// A row's bytes: its blocks' scales, then its values packed.
class BlockQuantCodec final : public ValueCodec {
 public:
  explicit BlockQuantCodec(int bits) : bits_(bits) {}
  [[nodiscard]] std::string name() const override { return fmt::format("int{}", bits_); }
  [[nodiscard]] std::int64_t unit() const override { return kQuantBlock; }
  [[nodiscard]] at::Tensor encode(const at::Tensor& x) const override {
    const std::int64_t rows = x.size(0);
    const QuantizedBlocks q = quantize_blocks(x.reshape({-1}), bits_);
    const at::Tensor values = bits_ == 8 ? q.values.view(torch::kUInt8) : pack_fields(q.values, bits_);
    return torch::cat({q.scales.reshape({rows, -1}).view(torch::kUInt8), values.reshape({rows, -1})}, 1).contiguous();
  }
  [[nodiscard]] at::Tensor decode(const at::Tensor& bytes, std::int64_t rows, std::int64_t n) const override {
    const std::int64_t scale_bytes = n / kQuantBlock * 4;
    const at::Tensor b = bytes.reshape({rows, -1});
    const at::Tensor values = b.narrow(1, scale_bytes, n * bits_ / 8).contiguous().reshape({-1});
    return dequantize_blocks({b.narrow(1, 0, scale_bytes).contiguous().view(torch::kFloat32).reshape({-1}),
                              bits_ == 8 ? values.view(torch::kInt8) : unpack_fields(values, bits_)});
  }

 private:
  int bits_;
};

class Bf16Codec final : public ValueCodec {
 public:
  [[nodiscard]] std::string name() const override { return "bf16"; }
  [[nodiscard]] std::int64_t unit() const override { return 1; }
  [[nodiscard]] at::Tensor encode(const at::Tensor& x) const override {
    return x.to(torch::kBFloat16).contiguous().view(torch::kUInt8).reshape({x.size(0), -1});
  }
  [[nodiscard]] at::Tensor decode(const at::Tensor& bytes, std::int64_t rows, std::int64_t n) const override {
    return bytes.reshape({rows * n * 2}).contiguous().view(torch::kBFloat16).to(torch::kFloat32);
  }
};

}  // namespace

std::unique_ptr<ValueCodec> make_value_codec(config::WireCodec kind) {
  switch (kind) {
    case config::WireCodec::kBf16: return std::make_unique<Bf16Codec>();
    case config::WireCodec::kInt8: return std::make_unique<BlockQuantCodec>(8);
    case config::WireCodec::kInt4: return std::make_unique<BlockQuantCodec>(4);
    case config::WireCodec::kInt2: return std::make_unique<BlockQuantCodec>(2);
    case config::WireCodec::kFp32: break;
  }
  throw std::invalid_argument("make_value_codec: fp32 travels as it is");
}

QuantizedBlocks quantize_blocks(const at::Tensor& x, int bits) {
  if (x.numel() % kQuantBlock != 0) {
    throw std::invalid_argument(
        fmt::format("quantize_blocks: {} values are not whole blocks of {}", x.numel(), kQuantBlock));
  }
  const auto largest = static_cast<double>((1 << (bits - 1)) - 1);
  const at::Tensor blocks = x.reshape({-1, kQuantBlock});
  const at::Tensor scales = blocks.abs().amax(1) / largest;
  // A block of zeros has scale 0 and values 0; dividing by 1 keeps them 0.
  const at::Tensor divisor = torch::where(scales > 0, scales, torch::ones_like(scales)).unsqueeze(1);
  const at::Tensor values =
      torch::round(blocks / divisor).clamp_(-largest, largest).to(torch::kInt8).reshape(x.sizes());
  return {scales, values};
}

at::Tensor dequantize_blocks(const QuantizedBlocks& q) {
  return (q.values.to(torch::kFloat32).reshape({-1, kQuantBlock}) * q.scales.unsqueeze(1)).reshape(q.values.sizes());
}

}  // namespace hpctrain::reduce
