// A DDAP checkpoint resumed at another world size. Its replicas belong to the
// ranks that wrote it, so they cannot be handed out one per rank; instead
// every new rank starts from the model a merge of them would give:
//  1. a merge in flight at the checkpoint (overlapped mode) is applied to
//     every replica, as each rank would have at the step it was due (to its
//     fragment only, in a streaming run: parallel.merge_fragments);
//  2. unless every replica is then the anchor (the checkpoint was taken at a
//     blocking merge), the replicas are merged by the run's rule, as at a
//     regular merge: the new anchor is next_anchor(anchor, M) (DiLoCo's outer
//     momentum steps once) and the merge is counted;
//  3. the AdamW moments are the mean of the replicas' (both moments, whatever
//     merge_moments says), the step counts those every replica shares;
//  4. with a quantized wire, every new rank's residual (error feedback) is the
//     mean of the old ranks' residuals, so the next merge still carries
//     what the old ones owed.
// Kept: the merged model, the outer momentum, the counters, the residuals'
// mean, the sample position (the trainer's, independent of the world size).
// Lost: each rank's own divergence from the merge, and its own moments
// (averaged).
#pragma once

#include <ATen/core/Tensor.h>

#include "ckpt/checkpoint.h"
#include "model/language_model.h"
#include "optim/optimizer.h"
#include "reduce/ddap_reducer.h"
#include "reduce/model_merge.h"

namespace hpctrain::reduce {

struct DdapResume {
  optim::AdamState adam;
  DdapState state;  // no merge in flight; every new rank's replica is state.anchor
};

// Reads every replica of `checkpoint`, one at a time (TIES reads each twice),
// so host memory holds one replica and the sums whatever the world size.
// Throws CheckpointError naming what is missing or inconsistent.
DdapResume merge_checkpoint_replicas(const ckpt::CheckpointReader& checkpoint, const model::LanguageModel& model,
                                     const MergeRule& rule);

}  // namespace hpctrain::reduce
