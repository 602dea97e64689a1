#include "reduce/encoded_gradient_wire.h"

#include <fmt/format.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <stdexcept>

namespace hpctrain::reduce {

EncodedGradientWire::EncodedGradientWire(comm::Communicator& comm, config::WireCodec kind)
    : comm_(comm), codec_(make_encoded_wire(kind, comm.size())) {}

std::string EncodedGradientWire::describe() const {
  return fmt::format("{} allreduce (alltoall and allgather)", codec_->describe());
}

void EncodedGradientWire::add_bucket(const at::Tensor& flat) { buckets_.push_back({flat, at::Tensor()}); }

void EncodedGradientWire::reduce(std::size_t b) {
  // Either of DDP's threads may get here; nothing here is a gradient of anything.
  const torch::NoGradGuard no_grad;
  Bucket& bucket = buckets_[b];
  const at::Tensor values = bucket.residual.defined() ? bucket.flat + bucket.residual : bucket.flat;
  MergeWire::Outgoing outgoing = codec_->encode(values);
  bucket.residual = outgoing.residual;
  const at::Tensor mean = codec_->merge(outgoing.payload, bucket.flat.numel(), comm_);
  bucket.flat.copy_(mean.mul(static_cast<double>(comm_.size())));
}

at::Tensor EncodedGradientWire::residual() const {
  std::vector<at::Tensor> parts;
  bool any = false;
  for (const Bucket& bucket : buckets_) {
    any = any || bucket.residual.defined();
    parts.push_back(bucket.residual.defined() ? bucket.residual.reshape({-1}) : torch::zeros_like(bucket.flat));
  }
  return any ? torch::cat(parts) : at::Tensor();
}

void EncodedGradientWire::set_residual(const at::Tensor& residual) {
  std::int64_t offset = 0;
  for (Bucket& bucket : buckets_) {
    if (!residual.defined()) {
      bucket.residual = at::Tensor();
      continue;
    }
    const std::int64_t n = bucket.flat.numel();
    if (offset + n > residual.numel()) throw std::invalid_argument("set_residual: fewer values than the buckets hold");
    bucket.residual = residual.narrow(0, offset, n).to(bucket.flat.device()).clone();
    offset += n;
  }
}

}  // namespace hpctrain::reduce
