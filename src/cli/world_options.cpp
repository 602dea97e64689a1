#include "cli/world_options.h"

#include <chrono>

namespace hpctrain::cli {

comm::WorldOptions world_options(const config::ParallelConfig& parallel) {
  comm::WorldOptions options;
  options.collective_timeout = std::chrono::milliseconds(static_cast<long long>(parallel.collective_timeout_s * 1e3));
  switch (parallel.comm_wait) {
    case config::CommWait::kSpin: options.wait = comm::WaitStrategy::kSpin; break;
    case config::CommWait::kYield: options.wait = comm::WaitStrategy::kYield; break;
    case config::CommWait::kSleep: options.wait = comm::WaitStrategy::kSleep; break;
  }
  return options;
}

}  // namespace hpctrain::cli
