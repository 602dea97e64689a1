// Whether LibTorch's CPU autocast is on, for kernels that take a faster fp32
// path only when it is off. LibTorch 2.4 replaced the per-device autocast
// calls (is_cpu_enabled, set_autocast_gpu_dtype, ...) with calls that take the
// device type, and the old ones warn on every call from then on; below 2.4 only
// the old ones exist. HPCTRAIN_AUTOCAST_BY_DEVICE_TYPE says which this build has.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define HPCTRAIN_AUTOCAST_BY_DEVICE_TYPE 1
#else
#define HPCTRAIN_AUTOCAST_BY_DEVICE_TYPE 0
#endif

namespace hpctrain::model {

inline bool cpu_autocast_enabled() {
#if HPCTRAIN_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::is_autocast_enabled(at::kCPU);
#else
  return at::autocast::is_cpu_enabled();
#endif
}

}  // namespace hpctrain::model
