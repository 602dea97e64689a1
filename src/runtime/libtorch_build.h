// Which LibTorch this hpctrain was built against: its version, and whether it
// has CUDA. Debian's is CPU-only: such a build trains on CPUs even on a GPU
// node, which `hpctrain --version` and the training log say.
#pragma once

#include <string>

namespace hpctrain::runtime {

struct LibTorchBuild {
  std::string version;  // "1.13.0"
  bool cuda = false;    // LibTorch's CUDA library was linked
};

LibTorchBuild libtorch_build();

// For `hpctrain --version`: "1.13.0, CPU only: ..." or "2.6.0 with CUDA; 1 GPU visible here".
std::string describe_libtorch();

}  // namespace hpctrain::runtime
