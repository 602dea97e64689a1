// Which BLAS LibTorch actually runs on. Debian resolves libblas.so.3 through
// alternatives; reference BLAS is ~30x slower than OpenBLAS, so we say which one
// was loaded instead of assuming.
#pragma once

#include <string>

namespace hpctrain::runtime {

struct BlasInfo {
  std::string library;  // resolved path of the loaded BLAS, or "not loaded"
  std::string config;   // openblas_get_config(), when the library is OpenBLAS
  bool openblas = false;
  int threads = 0;  // openblas_get_num_threads(), when OpenBLAS
};

BlasInfo describe_blas();

}  // namespace hpctrain::runtime
