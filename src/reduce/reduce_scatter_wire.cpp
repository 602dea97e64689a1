#include "reduce/reduce_scatter_wire.h"

#include <torch/types.h>
#include <torch/utils.h>

#include "reduce/optimizer_shard.h"

namespace hpctrain::reduce {

std::int64_t ReduceScatterWire::padded_numel(std::int64_t numel) const {
  return shard_numel(numel, comm_.size()) * comm_.size();
}

void ReduceScatterWire::add_bucket(const at::Tensor& flat) {
  const std::int64_t shard = flat.numel() / comm_.size();
  const auto bf16 = flat.options().dtype(torch::kBFloat16);
  Bucket bucket{flat, at::Tensor(), torch::zeros({shard}, flat.options()), at::Tensor()};
  if (bf16_) {
    bucket.wire = torch::empty({flat.numel()}, bf16);
    bucket.shard_wire = torch::empty({shard}, bf16);
  }
  buckets_.push_back(std::move(bucket));
}

void ReduceScatterWire::reduce(std::size_t b) {
  // Either of DDP's threads may get here; the bf16 copies must never be recorded.
  const torch::NoGradGuard no_grad;
  Bucket& bucket = buckets_[b];
  const auto shard = static_cast<std::size_t>(bucket.shard.numel());
  if (!bf16_) {
    comm_.reduce_scatter(bucket.flat.data_ptr(), bucket.shard.data_ptr(), shard, comm::DType::kFloat32,
                         comm::ReduceOp::kSum);
    return;
  }
  bucket.wire.copy_(bucket.flat);
  comm_.reduce_scatter(bucket.wire.data_ptr(), bucket.shard_wire.data_ptr(), shard, comm::DType::kBFloat16,
                       comm::ReduceOp::kSum);
  bucket.shard.copy_(bucket.shard_wire);
}

}  // namespace hpctrain::reduce
