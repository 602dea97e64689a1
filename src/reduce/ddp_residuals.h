// DDP's error-feedback residuals in a checkpoint (a quantized
// parallel.gradient_wire: encoded_gradient_wire.h). Each rank's residual is
// its own state, so a resume at the same world size continues bit for bit:
// "ddp_residual/rank-RRRRR", in the rank's shard (checkpoint.sharded) or gathered
// into rank 0's file. At another world size the residuals are what the ranks'
// sums still owe the optimizer, so the new ranks share the old residuals'
// sum equally: the owed total is kept, and paid over the next steps.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "ckpt/checkpoint.h"
#include "comm/communicator.h"

namespace hpctrain::reduce {

// The dataset of rank `rank`'s residual.
std::string ddp_residual_name(int rank);

// Adds this rank's `residual` (undefined: none owed; the same on every rank)
// to `snapshot`. Collective over `control` unless the snapshot is sharded.
void save_ddp_residual(ckpt::Snapshot& snapshot, const at::Tensor& residual, comm::Communicator& control);

// The residual rank `rank` of `world` continues with (`numel` values, on the
// CPU), or undefined where the checkpoint holds none (an fp32 run's, or one
// written before the first step).
at::Tensor load_ddp_residual(const ckpt::CheckpointReader& checkpoint, std::int64_t numel, int rank, int world);

}  // namespace hpctrain::reduce
