// bf16 autocast for the forward pass (LibTorch's autocast casts matmuls and
// linears to bf16); parameters stay fp32, the master weights. On a GPU the CUDA
// autocast state is used, on the CPU the CPU one.
// The calls differ below and from LibTorch 2.4 (model/autocast_state.h).
#pragma once

#include <ATen/autocast_mode.h>

#include "model/autocast_state.h"

namespace hpctrain::train {

class AutocastGuard {
 public:
  explicit AutocastGuard(bool enabled, bool cuda = false) : enabled_(enabled), cuda_(cuda) {
    if (!enabled_) return;
#if HPCTRAIN_AUTOCAST_BY_DEVICE_TYPE
    const at::DeviceType type = cuda_ ? at::kCUDA : at::kCPU;
    previous_ = at::autocast::is_autocast_enabled(type);
    at::autocast::set_autocast_dtype(type, at::kBFloat16);
    at::autocast::set_autocast_enabled(type, true);
#else
    if (cuda_) {
      previous_ = at::autocast::is_enabled();
      at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
      at::autocast::set_enabled(true);
    } else {
      previous_ = at::autocast::is_cpu_enabled();
      at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
      at::autocast::set_cpu_enabled(true);
    }
#endif
  }
  ~AutocastGuard() {
    if (!enabled_) return;
#if HPCTRAIN_AUTOCAST_BY_DEVICE_TYPE
    at::autocast::set_autocast_enabled(cuda_ ? at::kCUDA : at::kCPU, previous_);
#else
    if (cuda_) {
      at::autocast::set_enabled(previous_);
    } else {
      at::autocast::set_cpu_enabled(previous_);
    }
#endif
    at::autocast::clear_cache();
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_;
  bool cuda_;
  bool previous_ = false;
};

}  // namespace hpctrain::train
