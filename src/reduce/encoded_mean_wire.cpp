#include "reduce/encoded_mean_wire.h"

#include <fmt/format.h>
#include <torch/types.h>

#include <stdexcept>

namespace hpctrain::reduce {

EncodedMeanWire::EncodedMeanWire(int ranks, std::unique_ptr<ValueCodec> codec)
    : ranks_(ranks), codec_(std::move(codec)) {}

std::string EncodedMeanWire::describe() const { return fmt::format("{} (error feedback)", codec_->name()); }

std::int64_t EncodedMeanWire::chunk_numel(std::int64_t numel) const {
  const std::int64_t unit = codec_->unit();
  return (numel + ranks_ * unit - 1) / (ranks_ * unit) * unit;
}

MergeWire::Outgoing EncodedMeanWire::encode(const at::Tensor& values) const {
  const std::int64_t n = values.numel();
  const std::int64_t chunk = chunk_numel(n);
  at::Tensor padded = torch::zeros({ranks_, chunk}, values.options());
  padded.view({-1}).narrow(0, 0, n).copy_(values.reshape({-1}));
  at::Tensor bytes = codec_->encode(padded);
  const at::Tensor sent = codec_->decode(bytes, ranks_, chunk).narrow(0, 0, n).reshape(values.sizes());
  return {std::move(bytes), values - sent};
}

at::Tensor EncodedMeanWire::merge(const at::Tensor& payload, std::int64_t numel, comm::Communicator& comm) const {
  if (comm.size() != ranks_) {
    throw std::logic_error(fmt::format("a wire made for {} ranks, used on {}", ranks_, comm.size()));
  }
  const std::int64_t chunk = chunk_numel(numel);
  const auto row_bytes = static_cast<std::size_t>(payload.numel() / ranks_);
  // 1. Chunk r of every rank to rank r.
  at::Tensor mine = torch::empty_like(payload);
  comm.alltoall(payload.data_ptr(), mine.data_ptr(), row_bytes, comm::DType::kUInt8);
  // 2. Their mean, summed in rank order whatever the backend, encoded again.
  const at::Tensor copies = codec_->decode(mine, ranks_, chunk).reshape({ranks_, chunk});
  at::Tensor sum = torch::zeros({chunk}, copies.options());
  for (int r = 0; r < ranks_; ++r) sum += copies[r];
  const at::Tensor mean_bytes = codec_->encode((sum / static_cast<double>(ranks_)).reshape({1, chunk}));
  // 3. Every rank's mean chunk to every rank.
  at::Tensor all = torch::empty({static_cast<std::int64_t>(ranks_) * mean_bytes.numel()}, payload.options());
  comm.allgather(mean_bytes.data_ptr(), all.data_ptr(), row_bytes, comm::DType::kUInt8);
  return codec_->decode(all, ranks_, chunk).narrow(0, 0, numel).clone();
}

}  // namespace hpctrain::reduce
