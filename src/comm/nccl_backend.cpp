#include "comm/nccl_backend.h"

#ifdef HPCTRAIN_HAVE_NCCL
#include <fmt/format.h>

#include "handles/cuda_nccl_api.h"
#endif

namespace hpctrain::comm {

std::string nccl_backend_summary() {
#ifdef HPCTRAIN_HAVE_NCCL
  return fmt::format(
      "built against {}; {} and {} are opened when a model goes on a GPU "
      "($HPCTRAIN_NCCL_LIBRARY, $HPCTRAIN_CUDART_LIBRARY, the loader's path, then the build's CUDA)",
      handles::built_against(), handles::nccl_soname(), handles::cudart_soname());
#else
  return "not built (CUDA and NCCL were not found, or -DHPCTRAIN_WITH_NCCL=OFF): CPU training only";
#endif
}

}  // namespace hpctrain::comm
