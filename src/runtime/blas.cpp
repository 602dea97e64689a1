#include "runtime/blas.h"

#include <dlfcn.h>
#include <link.h>
#include <torch/types.h>

#include <climits>
#include <cstdlib>
#include <string_view>

namespace hpctrain::runtime {
namespace {

int find_blas(dl_phdr_info* info, std::size_t /*size*/, void* out) {
  const std::string_view name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (name.find("libblas.so") == std::string_view::npos && name.find("libopenblas") == std::string_view::npos) {
    return 0;
  }
  char resolved[PATH_MAX] = {};
  *static_cast<std::string*>(out) = realpath(info->dlpi_name, resolved) != nullptr ? resolved : std::string(name);
  return 1;
}

}  // namespace

BlasInfo describe_blas() {
  // A tiny matmul makes LibTorch load its BLAS if it is loaded lazily.
  (void)torch::mm(torch::ones({2, 2}), torch::ones({2, 2}));
  BlasInfo info;
  info.library = "not loaded";
  dl_iterate_phdr(&find_blas, &info.library);
  using GetConfig = const char* (*)();
  using GetThreads = int (*)();
  if (auto* get_config = reinterpret_cast<GetConfig>(dlsym(RTLD_DEFAULT, "openblas_get_config"))) {
    info.openblas = true;
    info.config = get_config();
  }
  if (auto* get_threads = reinterpret_cast<GetThreads>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))) {
    info.threads = get_threads();
  }
  return info;
}

}  // namespace hpctrain::runtime
