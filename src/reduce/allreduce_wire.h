// DDP's exchange: each bucket sum-allreduced in place, in fp32 or through a
// bf16 copy (gradient_wire.h).
#pragma once

#include <vector>

#include "reduce/gradient_wire.h"

namespace hpctrain::reduce {

class AllreduceWire final : public GradientWire {
 public:
  AllreduceWire(comm::Communicator& comm, bool bf16) : comm_(comm), bf16_(bf16) {}

  [[nodiscard]] std::string describe() const override { return bf16_ ? "bf16 allreduce" : "fp32 allreduce"; }
  [[nodiscard]] std::int64_t padded_numel(std::int64_t numel) const override { return numel; }
  void add_bucket(const at::Tensor& flat) override;
  void reduce(std::size_t bucket) override;
  [[nodiscard]] const at::Tensor& summed(std::size_t bucket) const override { return buckets_[bucket].flat; }

 private:
  struct Bucket {
    at::Tensor flat;  // the gradients, and their sum afterwards
    at::Tensor wire;  // bf16: the copy that travels
  };
  comm::Communicator& comm_;
  bool bf16_;
  std::vector<Bucket> buckets_;
};

}  // namespace hpctrain::reduce
