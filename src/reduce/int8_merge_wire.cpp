#include "reduce/int8_merge_wire.h"

#include <fmt/format.h>
#include <torch/types.h>

#include <stdexcept>

namespace hpctrain::reduce {
namespace {

// A chunk's bytes on the wire: its scales, then its int8 values.
at::Tensor pack(const Int8Blocks& q, std::int64_t rows) {
  return torch::cat(
             {q.scales.reshape({rows, -1}).view(torch::kUInt8), q.values.reshape({rows, -1}).view(torch::kUInt8)}, 1)
      .contiguous();
}

// The inverse of pack for `rows` rows of `chunk` values each.
Int8Blocks unpack(const at::Tensor& bytes, std::int64_t rows, std::int64_t chunk) {
  const std::int64_t scale_bytes = chunk / kInt8Block * 4;
  const at::Tensor b = bytes.reshape({rows, -1});
  return {b.narrow(1, 0, scale_bytes).contiguous().view(torch::kFloat32).reshape({-1}),
          b.narrow(1, scale_bytes, chunk).contiguous().view(torch::kInt8).reshape({-1})};
}

}  // namespace

Int8Blocks quantize_int8(const at::Tensor& x) {
  if (x.numel() % kInt8Block != 0) {
    throw std::invalid_argument(
        fmt::format("quantize_int8: {} values are not whole blocks of {}", x.numel(), kInt8Block));
  }
  const at::Tensor blocks = x.reshape({-1, kInt8Block});
  const at::Tensor scales = blocks.abs().amax(1) / 127.0;
  // A block of zeros has scale 0 and values 0; dividing by 1 keeps them 0.
  const at::Tensor divisor = torch::where(scales > 0, scales, torch::ones_like(scales)).unsqueeze(1);
  const at::Tensor values = torch::round(blocks / divisor).clamp_(-127, 127).to(torch::kInt8).reshape(x.sizes());
  return {scales, values};
}

at::Tensor dequantize_int8(const Int8Blocks& q) {
  return (q.values.to(torch::kFloat32).reshape({-1, kInt8Block}) * q.scales.unsqueeze(1)).reshape(q.values.sizes());
}

std::int64_t Int8MergeWire::chunk_numel(std::int64_t numel) const {
  const std::int64_t per_chunk_blocks = (numel + ranks_ * kInt8Block - 1) / (ranks_ * kInt8Block);
  return per_chunk_blocks * kInt8Block;
}

MergeWire::Outgoing Int8MergeWire::encode(const at::Tensor& values) const {
  const std::int64_t n = values.numel();
  const std::int64_t chunk = chunk_numel(n);
  at::Tensor padded = torch::zeros({chunk * ranks_}, values.options());
  padded.narrow(0, 0, n).copy_(values.reshape({-1}));
  const Int8Blocks q = quantize_int8(padded);
  return {pack(q, ranks_), values - dequantize_int8(q).narrow(0, 0, n).reshape(values.sizes())};
}

at::Tensor Int8MergeWire::merge(const at::Tensor& payload, std::int64_t numel, comm::Communicator& comm) const {
  if (comm.size() != ranks_) {
    throw std::logic_error(fmt::format("int8 merge wire made for {} ranks, used on {}", ranks_, comm.size()));
  }
  const std::int64_t chunk = chunk_numel(numel);
  const auto row_bytes = static_cast<std::size_t>(payload.numel() / ranks_);
  // 1. Chunk r of every rank to rank r.
  at::Tensor mine = torch::empty_like(payload);
  comm.alltoall(payload.data_ptr(), mine.data_ptr(), row_bytes, comm::DType::kUInt8);
  // 2. Their mean, summed in rank order whatever the backend, quantized again.
  const at::Tensor copies = dequantize_int8(unpack(mine, ranks_, chunk)).reshape({ranks_, chunk});
  at::Tensor sum = torch::zeros({chunk}, copies.options());
  for (int r = 0; r < ranks_; ++r) sum += copies[r];
  const at::Tensor mean_bytes = pack(quantize_int8(sum / static_cast<double>(ranks_)), 1);
  // 3. Every rank's mean chunk to every rank.
  at::Tensor all = torch::empty({static_cast<std::int64_t>(ranks_) * mean_bytes.numel()}, payload.options());
  comm.allgather(mean_bytes.data_ptr(), all.data_ptr(), row_bytes, comm::DType::kUInt8);
  return dequantize_int8(unpack(all, ranks_, chunk)).narrow(0, 0, numel).clone();
}

}  // namespace hpctrain::reduce
