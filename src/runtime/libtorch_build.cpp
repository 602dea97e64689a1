#include "runtime/libtorch_build.h"

#include <fmt/format.h>
#include <torch/cuda.h>
#include <torch/version.h>

// A pip LibTorch carries a newer fmt's headers in its include directory; built
// against those and linked with the fmt CMake found, hpctrain would fail only
// at the link, on fmt::v12 symbols (cmake/Dependencies.cmake puts fmt first).
#ifdef HPCTRAIN_FMT_LINKED
static_assert(FMT_VERSION == HPCTRAIN_FMT_LINKED, "fmt's headers beside LibTorch's are not the fmt linked");
#endif

namespace hpctrain::runtime {

LibTorchBuild libtorch_build() {
  // HPCTRAIN_TORCH_CUDA comes from CMake, which saw whether LibTorch brought
  // its CUDA library (cmake/Dependencies.cmake): a CPU-only LibTorch and a
  // CUDA one on a node without GPUs both see none at run time.
  return {TORCH_VERSION, HPCTRAIN_TORCH_CUDA != 0};
}

std::string describe_libtorch() {
  const LibTorchBuild build = libtorch_build();
  if (!build.cuda) {
    return fmt::format(
        "{}, CPU only: models train on CPUs, on a GPU node too (training.device = \"auto\" picks the CPUs, "
        "\"cuda\" is refused); for GPUs build against a CUDA LibTorch (docs/bootstrap.md, \"Building for GPUs\")",
        build.version);
  }
  const auto gpus = torch::cuda::device_count();
  return fmt::format("{} with CUDA; {} GPU{} visible here", build.version, gpus, gpus == 1 ? "" : "s");
}

}  // namespace hpctrain::runtime
