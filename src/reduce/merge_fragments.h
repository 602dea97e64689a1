// Streaming DDAP (parallel.merge_fragments = P): the model's flat parameter
// vector cut into P fragments that merge on a staggered schedule, one
// fragment every H/P steps, so each merge sends 1/P of the model and the
// link carries a steady trickle instead of a burst every H steps (after
// "Streaming DiLoCo", Douillard et al., 2025). Each fragment still merges
// once every H steps, so the bytes per step are those of P = 1.
//
// Fragments are contiguous runs of whole parameters in registration order
// (embeddings, then block after block: roughly the paper's layer groups);
// cut p (1 <= p < P) falls on the parameter boundary nearest to p·n/P that
// leaves every fragment at least one parameter.
// Fragment p merges at local step u = step − sync_steps when
// u mod H = ⌊(p + 1)·H / P⌋ mod H (u >= 1): the last fragment merges when an
// unfragmented run would, the others before it, evenly spaced.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "reduce/flat_parameters.h"

namespace hpctrain::reduce {

class MergeFragments {
 public:
  // `parameter_sizes`: each parameter's element count, in registration
  // order. Throws std::invalid_argument when the model has fewer parameters
  // than fragments, or `fragments` exceeds `merge_every` (two fragments would
  // share a step).
  MergeFragments(const std::vector<std::int64_t>& parameter_sizes, std::int64_t fragments, std::int64_t merge_every);

  [[nodiscard]] const std::vector<FlatRange>& ranges() const { return ranges_; }
  [[nodiscard]] FlatRange whole() const { return {0, ranges_.back().end}; }
  // The fragment that merges after local step `local_step` (>= 1), if any.
  [[nodiscard]] std::optional<FlatRange> due(std::int64_t local_step) const;

 private:
  std::vector<FlatRange> ranges_;
  std::vector<std::int64_t> phases_;  // fragment p merges when u mod H == phases_[p]
  std::int64_t merge_every_;
};

}  // namespace hpctrain::reduce
