// DDAP's merge rules (docs/reducers.md). Each rank i holds its replica θᵢ and
// the shared anchor (the last merged weights); Δᵢ = θᵢ − anchor.
//   average: M = mean over ranks of Δᵢ (local SGD)
//   ties:    s = sign(Σᵢ Δᵢ) elects a sign per element; only the Δᵢ whose sign
//            equals s (and are non-zero) count; M = (Σ agreeing Δᵢ) / (number of
//            agreeing ranks), 0 where none agree ("disjoint mean")
//   diloco:  g = −mean(Δᵢ) is a pseudo-gradient; Nesterov outer step:
//            v ← μ·v + g;  anchor ← anchor − η·(g + μ·v)
// For average and ties the new anchor is anchor + M.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>

#include "comm/communicator.h"
#include "config/experiment.h"
#include "reduce/flat_parameters.h"

namespace hpctrain::reduce {

// parallel.merge, outer_lr (diloco η) and outer_momentum (diloco μ).
struct MergeRule {
  config::MergeKind kind;
  double outer_lr;
  double outer_momentum;
  static MergeRule of(const config::ParallelConfig& parallel) {
    return {parallel.merge, parallel.outer_lr, parallel.outer_momentum};
  }
};

// The collective part of a merge: M from this rank's Δ (fp32, flat). Blocking;
// every rank must call it with the same rule. ties takes three allreduces
// (the sum of Δ, then the sum of agreeing Δ and the agreeing counts).
at::Tensor merged_delta(const at::Tensor& delta, const MergeRule& rule, comm::Communicator& comm);
// The same M from the Δ of `ranks` ranks that `delta(r)` produces one at a
// time (a checkpoint's replicas, merged when it resumes at another world
// size), holding one Δ at a time besides the sums; ties asks for each twice.
// Sums run in rank order, so the result can differ from the collective's in
// the last bits.
at::Tensor merged_delta(int ranks, const std::function<at::Tensor(int)>& delta, const MergeRule& rule);

// The new anchor from the old one and M; updates the diloco momentum in place.
at::Tensor next_anchor(const at::Tensor& anchor, const at::Tensor& merged, const MergeRule& rule, at::Tensor& momentum);
// The same, in place, for a merge of the values `range` of the flat vectors
// (M holds those values): only they change in `anchor` and in diloco's
// `momentum`, which starts at zeros for every value. A streaming merge
// moves its fragment; a whole merge all of them.
void step_anchor(at::Tensor& anchor, FlatRange range, const at::Tensor& merged, const MergeRule& rule,
                 at::Tensor& momentum);
// An overlapped merge's rule for a replica `theta` (flat, in place) once the
// anchor has stepped: θ ← anchor + (θ − θ at the merge's start), on the
// values `range` (`at_start` holds those): the local progress made while the
// merge was in flight is kept.
void rebase_on_anchor(at::Tensor& theta, const at::Tensor& anchor, FlatRange range, const at::Tensor& at_start);

}  // namespace hpctrain::reduce
