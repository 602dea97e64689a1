// The bootstrap options an experiment's [parallel] section asks for: the
// collective timeout and how a rank waits for a collective.
#pragma once

#include "comm/world.h"
#include "config/experiment.h"

namespace hpctrain::cli {

comm::WorldOptions world_options(const config::ParallelConfig& parallel);

}  // namespace hpctrain::cli
