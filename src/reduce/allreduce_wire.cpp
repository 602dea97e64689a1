#include "reduce/allreduce_wire.h"

#include <torch/types.h>
#include <torch/utils.h>

namespace hpctrain::reduce {

void AllreduceWire::add_bucket(const at::Tensor& flat) {
  Bucket bucket{flat, at::Tensor()};
  if (bf16_) bucket.wire = torch::empty({flat.numel()}, flat.options().dtype(torch::kBFloat16));
  buckets_.push_back(std::move(bucket));
}

void AllreduceWire::reduce(std::size_t b) {
  // Either of DDP's threads may get here; the bf16 copies must never be recorded.
  const torch::NoGradGuard no_grad;
  Bucket& bucket = buckets_[b];
  const auto n = static_cast<std::size_t>(bucket.flat.numel());
  if (!bf16_) {
    comm_.allreduce(bucket.flat.data_ptr(), n, comm::DType::kFloat32, comm::ReduceOp::kSum);
    return;
  }
  bucket.wire.copy_(bucket.flat);
  comm_.allreduce(bucket.wire.data_ptr(), n, comm::DType::kBFloat16, comm::ReduceOp::kSum);
  bucket.flat.copy_(bucket.wire);
}

}  // namespace hpctrain::reduce
