// RMSNorm (Zhang and Sennrich, 2019), as Hugging Face's LlamaRMSNorm computes
// it: x / sqrt(mean(x²) + eps) in fp32 whatever x's type, cast back to x's
// type, then times a learned weight (no bias, no centring).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace hpctrain::model {

class RmsNormImpl : public torch::nn::Module {
 public:
  RmsNormImpl(std::int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& x) const;
  at::Tensor weight;

 private:
  double eps_;
};
TORCH_MODULE(RmsNorm);

}  // namespace hpctrain::model
