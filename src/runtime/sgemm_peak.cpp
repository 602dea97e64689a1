#include "runtime/sgemm_peak.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

namespace hpctrain::runtime {

double measure_sgemm_peak() {
  torch::NoGradGuard no_grad;
  constexpr std::int64_t n = 2048;
  const auto a = torch::randn({n, n});
  const auto b = torch::randn({n, n});
  auto c = torch::empty({n, n});
  constexpr double kBudgetSeconds = 0.5;
  double best = 0;
  double spent = 0;
  for (int i = 0; i < 4 && (i < 2 || spent < kBudgetSeconds); ++i) {
    const auto start = std::chrono::steady_clock::now();
    torch::mm_out(c, a, b);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spent += seconds;
    best = std::max(best, 2.0 * static_cast<double>(n * n * n) / seconds);
  }
  return best;
}

}  // namespace hpctrain::runtime
