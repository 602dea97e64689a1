#include "reduce/quantized_merge_wire.h"

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

}  // namespace

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

QuantizedMergeWire::QuantizedMergeWire(int ranks, int bits) : ranks_(ranks), bits_(bits) {
  if (bits != 8 && bits != 4 && bits != 2)
    throw std::invalid_argument(fmt::format("a quantized merge wire of {} bits", bits));
}

std::string QuantizedMergeWire::describe() const { return fmt::format("int{} (error feedback)", bits_); }

std::int64_t QuantizedMergeWire::chunk_numel(std::int64_t numel) const {
  const std::int64_t per_chunk_blocks = (numel + ranks_ * kQuantBlock - 1) / (ranks_ * kQuantBlock);
  return per_chunk_blocks * kQuantBlock;
}

at::Tensor QuantizedMergeWire::pack(const QuantizedBlocks& q, std::int64_t rows) const {
  const at::Tensor values = bits_ == 8 ? q.values.view(torch::kUInt8) : pack_fields(q.values, bits_);
  return torch::cat({q.scales.reshape({rows, -1}).view(torch::kUInt8), values.reshape({rows, -1})}, 1).contiguous();
}

QuantizedBlocks QuantizedMergeWire::unpack(const at::Tensor& bytes, std::int64_t rows, std::int64_t chunk) const {
  const std::int64_t scale_bytes = chunk / kQuantBlock * 4;
  const at::Tensor b = bytes.reshape({rows, -1});
  const at::Tensor values = b.narrow(1, scale_bytes, chunk * bits_ / 8).contiguous().reshape({-1});
  return {b.narrow(1, 0, scale_bytes).contiguous().view(torch::kFloat32).reshape({-1}),
          bits_ == 8 ? values.view(torch::kInt8) : unpack_fields(values, bits_)};
}

MergeWire::Outgoing QuantizedMergeWire::encode(const at::Tensor& values) const {
  const std::int64_t n = values.numel();
  const std::int64_t chunk = chunk_numel(n);
  at::Tensor padded = torch::zeros({chunk * ranks_}, values.options());
  padded.narrow(0, 0, n).copy_(values.reshape({-1}));
  const QuantizedBlocks q = quantize_blocks(padded, bits_);
  return {pack(q, ranks_), values - dequantize_blocks(q).narrow(0, 0, n).reshape(values.sizes())};
}

at::Tensor QuantizedMergeWire::merge(const at::Tensor& payload, std::int64_t numel, comm::Communicator& comm) const {
  if (comm.size() != ranks_) {
    throw std::logic_error(fmt::format("a merge wire made for {} ranks, used on {}", ranks_, comm.size()));
  }
  const std::int64_t chunk = chunk_numel(numel);
  const auto row_bytes = static_cast<std::size_t>(payload.numel() / ranks_);
  // 1. Chunk r of every rank to rank r.
  at::Tensor mine = torch::empty_like(payload);
  comm.alltoall(payload.data_ptr(), mine.data_ptr(), row_bytes, comm::DType::kUInt8);
  // 2. Their mean, summed in rank order whatever the backend, quantized again.
  const at::Tensor copies = dequantize_blocks(unpack(mine, ranks_, chunk)).reshape({ranks_, chunk});
  at::Tensor sum = torch::zeros({chunk}, copies.options());
  for (int r = 0; r < ranks_; ++r) sum += copies[r];
  const at::Tensor mean_bytes = pack(quantize_blocks(sum / static_cast<double>(ranks_), bits_), 1);
  // 3. Every rank's mean chunk to every rank.
  at::Tensor all = torch::empty({static_cast<std::int64_t>(ranks_) * mean_bytes.numel()}, payload.options());
  comm.allgather(mean_bytes.data_ptr(), all.data_ptr(), row_bytes, comm::DType::kUInt8);
  return dequantize_blocks(unpack(all, ranks_, chunk)).narrow(0, 0, numel).clone();
}

}  // namespace hpctrain::reduce
