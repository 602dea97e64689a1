// bf16 autocast on the CPU for the forward pass (LibTorch's CPU autocast casts
// matmuls and linears to bf16); parameters stay fp32, the master weights.
#pragma once

#include <ATen/autocast_mode.h>

namespace hpctrain::train {

class AutocastGuard {
 public:
  explicit AutocastGuard(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
    previous_ = at::autocast::is_cpu_enabled();
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(true);
  }
  ~AutocastGuard() {
    if (!enabled_) return;
    at::autocast::set_cpu_enabled(previous_);
    at::autocast::clear_cache();
  }
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  bool enabled_;
  bool previous_ = false;
};

}  // namespace hpctrain::train
