#include "model/linear_cross_entropy.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <array>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/autocast_state.h"
#include "model/cross_entropy_row.h"
#include "model/language_model.h"

namespace hpctrain::model {
namespace {

constexpr std::int64_t kIgnore = -100;
constexpr std::int64_t kBlockBytes = std::int64_t{8} << 20;

// Logits of rows [begin, begin + block.size(0)) into `block`.
void block_logits(at::Tensor& block, const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& bias,
                  std::int64_t begin) {
  const at::Tensor rows = hidden.narrow(0, begin, block.size(0));
  if (bias.numel() > 0) {
    torch::addmm_out(block, bias, rows, weight.t());
  } else {
    torch::mm_out(block, rows, weight.t());
  }
}

// The summed loss of a block of logits, which it overwrites. With `scale` set,
// the block becomes d(mean loss)/d(logits): softmax minus one-hot, times
// `scale`, zero on ignored rows. One row at a time (model/cross_entropy_row),
// in cache from the first pass over it to the last.
double block_loss(at::Tensor& block, const at::Tensor& targets, const double* scale) {
  const std::int64_t rows = block.size(0);
  const std::int64_t size = block.size(1);
  float* logits = block.data_ptr<float>();
  const std::int64_t* target = targets.data_ptr<std::int64_t>();
  const float row_scale = scale != nullptr ? static_cast<float>(*scale) : 0.0F;
  std::vector<float> losses(static_cast<std::size_t>(rows), 0.0F);
  at::parallel_for(0, rows, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      float* row = logits + r * size;
      if (target[r] == kIgnore) {
        if (scale != nullptr) std::fill(row, row + size, 0.0F);
        continue;
      }
      losses[static_cast<std::size_t>(r)] = cross_entropy_row(row, size, target[r], row_scale, scale != nullptr);
    }
  });
  return std::accumulate(losses.begin(), losses.end(), 0.0);  // in row order, however the rows were split
}

at::Tensor mean_or_nan(double sum, std::int64_t count, const at::TensorOptions& options) {
  // LibTorch's mean cross-entropy over no targets is 0/0 as well.
  return torch::scalar_tensor(count > 0 ? sum / static_cast<double>(count) : std::numeric_limits<double>::quiet_NaN(),
                              options);
}

// The gradients are computed in forward, block by block, and only scaled in
// backward: the loss is a scalar, so its gradient is known up to that factor.
// `count` is the number of targets that are not ignored (the mean's divisor).
class FusedLinearCrossEntropy : public torch::autograd::Function<FusedLinearCrossEntropy> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& hidden, const at::Tensor& weight,
                            const at::Tensor& bias, const at::Tensor& targets, std::int64_t count, std::int64_t rows) {
    const std::int64_t n = hidden.size(0);
    const double scale = count > 0 ? 1.0 / static_cast<double>(count) : 0.0;
    at::Tensor d_logits = torch::empty({n, weight.size(0)}, hidden.options());
    at::Tensor d_bias = bias.numel() > 0 ? torch::zeros_like(bias) : torch::empty({0}, bias.options());
    double sum = 0;
    for (std::int64_t begin = 0; begin < n; begin += rows) {
      at::Tensor block = d_logits.narrow(0, begin, std::min(rows, n - begin));
      block_logits(block, hidden, weight, bias, begin);
      sum += block_loss(block, targets.narrow(0, begin, block.size(0)), &scale);
      if (bias.numel() > 0) d_bias.add_(block.sum(0));
    }
    // Not save_for_backward: backward hands these buffers on, and autograd
    // adopts a gradient without copying only when nothing else holds it.
    ctx->saved_data["d_hidden"] = torch::mm(d_logits, weight);
    ctx->saved_data["d_weight"] = torch::mm(d_logits.t(), hidden);
    ctx->saved_data["d_bias"] = d_bias;
    return mean_or_nan(sum, count, hidden.options());
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    if (ctx->saved_data.empty()) {
      throw std::logic_error("linear_cross_entropy: backward ran twice (retain_graph is not supported)");
    }
    std::array<at::Tensor, 3> d = {ctx->saved_data["d_hidden"].toTensor(), ctx->saved_data["d_weight"].toTensor(),
                                   ctx->saved_data["d_bias"].toTensor()};
    ctx->saved_data.clear();
    // Training scales the loss (accumulation, averaging over ranks); 1 needs no pass.
    const at::Tensor& g = grad_outputs[0];
    if (g.item<double>() != 1.0) {
      for (auto& t : d) t.mul_(g);
    }
    return {d[0], d[1], d[2].numel() > 0 ? d[2] : at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor loss_only(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& bias,
                     const at::Tensor& targets, std::int64_t count, std::int64_t rows) {
  const std::int64_t n = hidden.size(0);
  at::Tensor block_buffer = torch::empty({std::min(rows, n), weight.size(0)}, hidden.options());
  double sum = 0;
  for (std::int64_t begin = 0; begin < n; begin += rows) {
    at::Tensor block = block_buffer.narrow(0, 0, std::min(rows, n - begin));
    block_logits(block, hidden, weight, bias, begin);
    sum += block_loss(block, targets.narrow(0, begin, block.size(0)), nullptr);
  }
  return mean_or_nan(sum, count, hidden.options());
}

}  // namespace

at::Tensor linear_cross_entropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& bias,
                                const at::Tensor& targets, std::int64_t rows_per_block) {
  const bool fused = hidden.is_cpu() && hidden.scalar_type() == torch::kFloat32 &&
                     weight.scalar_type() == torch::kFloat32 && !cpu_autocast_enabled();
  if (!fused) {
    at::Tensor logits = torch::matmul(hidden, weight.t());
    if (bias.defined()) logits = logits + bias;
    return language_model_loss(logits, targets);
  }
  at::Tensor h = hidden.contiguous();
  at::Tensor t = targets.to(torch::kInt64).contiguous();
  // Masked LM: most targets are ignored; their rows cost logits and give nothing.
  const at::Tensor valid = t.ne(kIgnore);
  const std::int64_t count = valid.sum().item<std::int64_t>();
  if (count > 0 && count < t.numel()) {
    const at::Tensor kept = valid.nonzero().squeeze(1);
    h = h.index_select(0, kept);
    t = t.index_select(0, kept);
  }
  if (count > 0) {
    // The loss reads logits at the targets without bounds checks.
    const auto [min, max] = torch::aminmax(t);
    const std::int64_t lowest = min.item<std::int64_t>(), highest = max.item<std::int64_t>();
    if (lowest < 0 || highest >= weight.size(0)) {
      throw std::out_of_range("linear_cross_entropy: target " + std::to_string(lowest < 0 ? lowest : highest) +
                              " is outside the vocabulary [0, " + std::to_string(weight.size(0)) + ")");
    }
  }
  const std::int64_t n = std::max<std::int64_t>(h.size(0), 1);
  // Each block's GEMM packs all of the weight again: fewer than 256 rows and that dominates.
  const std::int64_t rows = rows_per_block > 0
                                ? std::min(rows_per_block, n)
                                : std::min(std::max<std::int64_t>(kBlockBytes / (weight.size(0) * 4), 256), n);
  const at::Tensor b = bias.defined() ? bias : torch::empty({0}, weight.options());
  const bool needs_gradient = torch::GradMode::is_enabled() &&
                              (h.requires_grad() || weight.requires_grad() || (bias.defined() && bias.requires_grad()));
  if (!needs_gradient) return loss_only(h, weight, b, t, count, rows);
  return FusedLinearCrossEntropy::apply(h, weight, b, t, count, rows);
}

}  // namespace hpctrain::model
