#include "model/attention_core.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

namespace hpctrain::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

class HeadParallelAttention : public torch::autograd::Function<HeadParallelAttention> {
 public:
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q, const torch::Tensor& k,
                               const torch::Tensor& v, const torch::Tensor& bias, double scale) {
    const auto n = q.size(0), t = q.size(1);
    auto probs = torch::empty({n, t, t}, q.options());
    auto y = torch::empty_like(v, at::MemoryFormat::Contiguous);
    // Inside parallel_for, ATen ops and (OpenMP) OpenBLAS run on the calling thread alone.
    at::parallel_for(0, n, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t h = begin; h < end; ++h) {
        torch::Tensor p = probs[h];
        if (bias.numel() > 0) {
          torch::addmm_out(p, bias, q[h], k[h].t(), 1.0, scale);
        } else {
          torch::mm_out(p, q[h], k[h].t()).mul_(scale);
        }
        torch::_softmax_out(p, p, -1, false);
        torch::Tensor out = y[h];
        torch::mm_out(out, p, v[h]);
      }
    });
    ctx->save_for_backward({q, k, v, probs});
    ctx->saved_data["scale"] = scale;
    return y;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3];
    const double scale = ctx->saved_data["scale"].toDouble();
    const torch::Tensor dy = grads[0].contiguous();
    auto dq = torch::empty_like(q, at::MemoryFormat::Contiguous);
    auto dk = torch::empty_like(k, at::MemoryFormat::Contiguous);
    auto dv = torch::empty_like(v, at::MemoryFormat::Contiguous);
    const auto n = q.size(0), t = q.size(1);
    at::parallel_for(0, n, 1, [&](std::int64_t begin, std::int64_t end) {
      auto dp = torch::empty({t, t}, q.options());
      auto ds = torch::empty({t, t}, q.options());
      for (std::int64_t h = begin; h < end; ++h) {
        const torch::Tensor p = probs[h];
        torch::mm_out(dp, dy[h], v[h].t());
        torch::Tensor dv_h = dv[h], dq_h = dq[h], dk_h = dk[h];
        torch::mm_out(dv_h, p.t(), dy[h]);
        torch::_softmax_backward_data_out(ds, dp, p, -1, p.scalar_type());
        torch::addmm_out(dq_h, dq_h, ds, k[h], 0.0, scale);
        torch::addmm_out(dk_h, dk_h, ds.t(), q[h], 0.0, scale);
      }
    });
    return {dq, dk, dv, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

at::Tensor attention_core(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias,
                          double scale) {
  if (q.is_cpu() && q.scalar_type() == torch::kFloat32 && k.scalar_type() == torch::kFloat32 &&
      v.scalar_type() == torch::kFloat32) {
    // A custom Function takes no undefined tensors: no bias is an empty one.
    return HeadParallelAttention::apply(q, k, v, bias.defined() ? bias : torch::empty({0}, q.options()), scale);
  }
  const torch::Tensor scores = bias.defined() ? torch::baddbmm(bias, q, k.transpose(1, 2), 1.0, scale)
                                              : torch::bmm(q, k.transpose(1, 2)).mul_(scale);
  return torch::bmm(torch::softmax(scores, -1), v);
}

}  // namespace hpctrain::model
