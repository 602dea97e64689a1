#include "model/cross_entropy_row.h"

#include <cmath>
#include <limits>

#include "model/vector_exp.h"

namespace hpctrain::model {
namespace {

// Independent partial maxima and sums, one AVX-512 register of floats: the
// order of operations is fixed here, not by how wide a vector the CPU has.
constexpr int kLanes = 16;
constexpr std::int64_t kChunk = std::int64_t{64} * kLanes;

}  // namespace

// Compiled for AVX-512, AVX2 and plain x86-64, picked when the program loads;
// without contraction into FMAs (CMakeLists.txt), every variant gives the same
// bits. `a > b ? a : b` is what x86's max instructions compute, NaN included.
__attribute__((target_clones("avx512f", "avx2", "default"))) float cross_entropy_row(float* __restrict row,
                                                                                     std::int64_t size,
                                                                                     std::int64_t target, float scale,
                                                                                     bool gradient) {
  const float picked = row[target];
  const std::int64_t body = size - size % kLanes;

  float lane_max[kLanes];
  for (float& m : lane_max) m = -std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < body; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lane_max[l] = row[i + l] > lane_max[l] ? row[i + l] : lane_max[l];
  }
  float max = -std::numeric_limits<float>::infinity();
  for (const float m : lane_max) max = m > max ? m : max;
  for (std::int64_t i = body; i < size; ++i) max = row[i] > max ? row[i] : max;

  // A NaN logit escapes the maximum but not the sum, so the loss is NaN. Lane
  // sums restart every chunk and chunks add up in double: float sums over a
  // row of 50k exponentials would lose digits.
  double sum = 0;
  for (std::int64_t start = 0; start < body; start += kChunk) {
    const std::int64_t stop = start + kChunk < body ? start + kChunk : body;
    float lane_sum[kLanes] = {};
    for (std::int64_t i = start; i < stop; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) {
        const float e = exp_clamped(row[i + l] - max);
        row[i + l] = e;
        lane_sum[l] += e;
      }
    }
    float chunk = 0;
    for (const float s : lane_sum) chunk += s;
    sum += chunk;
  }
  for (std::int64_t i = body; i < size; ++i) {
    const float e = exp_clamped(row[i] - max);
    row[i] = e;
    sum += e;
  }

  const auto total = static_cast<float>(sum);
  if (gradient) {
    const float factor = scale / total;
    for (std::int64_t i = 0; i < size; ++i) row[i] *= factor;
    row[target] -= scale;
  }
  return (std::log(total) + max) - picked;
}

}  // namespace hpctrain::model
