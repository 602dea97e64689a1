#include "runtime/matmul_peak.h"

#include <torch/cuda.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>

namespace hpctrain::runtime {

double measure_matmul_peak(const torch::Device& device, torch::ScalarType dtype) {
  torch::NoGradGuard no_grad;
  const bool gpu = device.is_cuda();
  const std::int64_t n = gpu ? 8192 : 2048;
  const auto options = torch::TensorOptions().device(device).dtype(dtype);
  const auto a = torch::randn({n, n}, options);
  const auto b = torch::randn({n, n}, options);
  auto c = torch::empty({n, n}, options);
  const auto finish = [&] {
    if (gpu) torch::cuda::synchronize(device.index());
  };
  if (gpu) {
    torch::mm_out(c, a, b);  // warm-up: cuBLAS's handle and kernel choice
    finish();
  }
  constexpr double kBudgetSeconds = 0.5;
  const int at_least = gpu ? 4 : 2;
  double best = 0;
  double spent = 0;
  for (int i = 0; i < 4 && (i < at_least || spent < kBudgetSeconds); ++i) {
    const auto start = std::chrono::steady_clock::now();
    torch::mm_out(c, a, b);
    finish();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spent += seconds;
    best = std::max(best, 2.0 * static_cast<double>(n * n * n) / seconds);
  }
  return best;
}

}  // namespace hpctrain::runtime
