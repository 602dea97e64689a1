#include "model/rms_norm.h"

#include <torch/types.h>

namespace hpctrain::model {

RmsNormImpl::RmsNormImpl(std::int64_t dim, double eps) : eps_(eps) {
  weight = register_parameter("weight", torch::ones({dim}));
}

at::Tensor RmsNormImpl::forward(const at::Tensor& x) const {
  const at::Tensor x32 = x.to(torch::kFloat32);
  const at::Tensor normed = x32 * torch::rsqrt(x32.pow(2).mean(-1, true) + eps_);
  return weight * normed.to(x.scalar_type());
}

}  // namespace hpctrain::model
