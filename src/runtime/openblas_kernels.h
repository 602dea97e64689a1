// Which kernels OpenBLAS runs, and the restart that fixes a wrong choice.
// OpenBLAS built with DYNAMIC_ARCH picks its kernels once, as it loads, from
// the CPU's family and model numbers. A CPU newer than the OpenBLAS build is
// not recognised and gets the generic Prescott (SSE3) kernels: Debian 12's
// OpenBLAS 0.3.21 does that on Xeons of family 6 model 207, where an fp32
// matmul then runs at about a fifth of the AVX-512 kernels' rate (measured:
// 17-32 against 98-147 GFLOP/s on one core). OpenBLAS reads
// OPENBLAS_CORETYPE only while it loads, before main, so hpctrain sets it and
// executes itself again, once, before anything else (MPI included) started.
#pragma once

#include <string>
#include <string_view>

#include "cluster/environment.h"

namespace hpctrain::runtime {

// The vector extensions this CPU and its operating system can run.
struct CpuVectors {
  bool avx2 = false;    // with FMA
  bool avx512 = false;  // AVX-512 F
};
CpuVectors cpu_vectors();

// OpenBLAS's name for the kernels it chose (openblas_get_corename), or ""
// when the BLAS loaded is not OpenBLAS.
std::string openblas_core();

// The kernels to ask for when OpenBLAS chose `chosen`: "SkylakeX" or
// "Haswell" when `chosen` has no AVX2 kernels and the CPU runs AVX-512 or
// AVX2; "" when its choice fits the CPU (a recognised CPU, or one without
// AVX2). Only the fallback is overridden: a choice OpenBLAS made on purpose
// (Zen on an AMD CPU) is left alone.
std::string openblas_core_to_force(std::string_view chosen, CpuVectors cpu);

// Executes this program again with the same arguments and OPENBLAS_CORETYPE
// set, when the environment does not set it and OpenBLAS chose a fallback;
// does not return then. Returns when nothing needs doing, or when the restart
// could not run (the run goes on with the kernels it has, and
// openblas_kernels_note says so).
void restart_on_fitting_openblas_kernels(char** argv, const cluster::Environment& env);

// For the log: which kernels OpenBLAS runs and, when hpctrain chose them or
// when they fall short of the CPU, why and what to do; "" when not OpenBLAS.
std::string openblas_kernels_note(const cluster::Environment& env);
// The same for OpenBLAS's kernels `core` ("" when not OpenBLAS) on `cpu`;
// `dynamic_arch`: whether this OpenBLAS can run other kernels at all
// (openblas_get_config says DYNAMIC_ARCH), without which OPENBLAS_CORETYPE
// changes nothing and the note does not advise it.
std::string openblas_kernels_note(std::string_view core, CpuVectors cpu, const cluster::Environment& env,
                                  bool dynamic_arch = true);

}  // namespace hpctrain::runtime
