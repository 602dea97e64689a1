#include "reduce/merge_fragments.h"

#include <fmt/format.h>

#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace hpctrain::reduce {

MergeFragments::MergeFragments(const std::vector<std::int64_t>& parameter_sizes, std::int64_t fragments,
                               std::int64_t merge_every)
    : merge_every_(merge_every) {
  const auto count = static_cast<std::int64_t>(parameter_sizes.size());
  if (fragments < 1 || fragments > count) {
    throw std::invalid_argument(
        fmt::format("parallel.merge_fragments = {}: the model has {} parameters, and a fragment is at least one",
                    fragments, count));
  }
  if (merge_every < fragments) {
    throw std::invalid_argument(fmt::format(
        "parallel.merge_fragments = {} is more than parallel.merge_every = {}: two fragments would merge at one step",
        fragments, merge_every));
  }
  // Boundaries: boundary[i] is where parameter i starts; boundary[count] = n.
  std::vector<std::int64_t> boundary(static_cast<std::size_t>(count) + 1, 0);
  for (std::int64_t i = 0; i < count; ++i) {
    boundary[static_cast<std::size_t>(i) + 1] =
        boundary[static_cast<std::size_t>(i)] + parameter_sizes[static_cast<std::size_t>(i)];
  }
  const std::int64_t n = boundary.back();
  std::int64_t last = 0;  // the parameter index of the previous cut
  for (std::int64_t p = 1; p <= fragments; ++p) {
    std::int64_t cut = count;
    if (p < fragments) {
      // The boundary nearest to p·n/P (the first of two as near), leaving at
      // least one parameter to each fragment before and after it.
      const long double target =
          static_cast<long double>(n) * static_cast<long double>(p) / static_cast<long double>(fragments);
      long double best = std::numeric_limits<long double>::infinity();
      for (std::int64_t i = last + 1; i <= count - (fragments - p); ++i) {
        const long double distance = std::abs(static_cast<long double>(boundary[static_cast<std::size_t>(i)]) - target);
        if (distance < best) {
          best = distance;
          cut = i;
        }
      }
    }
    ranges_.push_back({boundary[static_cast<std::size_t>(last)], boundary[static_cast<std::size_t>(cut)]});
    // ⌊p·H/P⌋ without the product overflowing: H = q·P + r, r < P.
    const std::int64_t q = merge_every / fragments;
    const std::int64_t r = merge_every % fragments;
    phases_.push_back((p * q + p * r / fragments) % merge_every);
    last = cut;
  }
}

std::optional<FlatRange> MergeFragments::due(std::int64_t local_step) const {
  if (local_step < 1) return std::nullopt;
  const std::int64_t phase = local_step % merge_every_;
  for (std::size_t p = 0; p < phases_.size(); ++p) {
    if (phases_[p] == phase) return ranges_[p];
  }
  return std::nullopt;
}

}  // namespace hpctrain::reduce
