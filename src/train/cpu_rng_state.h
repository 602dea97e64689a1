// LibTorch's CPU generator as checkpointed state (rng/torch_cpu), so that
// whatever draws from it after a resume draws what the uninterrupted run
// would have. The trainer's own randomness does not use it (the sampler and
// the MLM masking hash the seed and the position); it is kept for what
// LibTorch draws by itself. The same on every rank, so one copy is kept.
#pragma once

#include "ckpt/checkpoint.h"

namespace hpctrain::train {

void save_cpu_rng(ckpt::Snapshot& snapshot);
void load_cpu_rng(const ckpt::CheckpointReader& checkpoint);

}  // namespace hpctrain::train
