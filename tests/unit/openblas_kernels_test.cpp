// OpenBLAS's fallback kernels on a CPU it does not recognise are overridden,
// and only those: a choice that uses AVX2 or wider is left as it is.
#include "runtime/openblas_kernels.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace hpctrain::runtime {
namespace {

using Vars = std::map<std::string, std::string>;
constexpr CpuVectors kAvx512{true, true};
constexpr CpuVectors kAvx2{true, false};
constexpr CpuVectors kSse{false, false};

TEST(OpenblasKernels, TheFallbackOnAnUnrecognisedCpuGetsItsWidestKernels) {
  EXPECT_EQ(openblas_core_to_force("Prescott", kAvx512), "SkylakeX");
  EXPECT_EQ(openblas_core_to_force("Nehalem", kAvx512), "SkylakeX");
  EXPECT_EQ(openblas_core_to_force("Sandybridge", kAvx2), "Haswell");
  EXPECT_EQ(openblas_core_to_force("Prescott", kAvx2), "Haswell");
}

TEST(OpenblasKernels, AChoiceThatFitsIsLeftAlone) {
  for (const char* core : {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids", "HASWELL", "zen"}) {
    EXPECT_EQ(openblas_core_to_force(core, kAvx512), "") << core;
  }
  EXPECT_EQ(openblas_core_to_force("Prescott", kSse), "");  // a CPU with nothing wider
  EXPECT_EQ(openblas_core_to_force("", kAvx512), "");       // not OpenBLAS
}

TEST(OpenblasKernels, TheNoteSaysWhatWasChosenAndWhatToDo) {
  const cluster::Environment restarted(
      Vars{{"OPENBLAS_CORETYPE", "SkylakeX"}, {"HPCTRAIN_OPENBLAS_CHOSE", "Prescott"}});
  EXPECT_EQ(openblas_kernels_note("SkylakeX", kAvx512, restarted),
            "OpenBLAS kernels SkylakeX (OpenBLAS chose Prescott on this CPU, which it does not recognise; "
            "hpctrain set OPENBLAS_CORETYPE=SkylakeX: set it yourself to choose)");
  EXPECT_EQ(openblas_kernels_note("Haswell", kAvx2, cluster::Environment()), "OpenBLAS kernels Haswell");
  EXPECT_EQ(openblas_kernels_note("Prescott", kAvx512, cluster::Environment(Vars{{"OPENBLAS_CORETYPE", "Prescott"}})),
            "OpenBLAS kernels Prescott, short of this CPU's AVX-512: matmuls run at about a fifth of their rate; "
            "set OPENBLAS_CORETYPE=SkylakeX (or leave it unset for hpctrain to)");
  EXPECT_EQ(openblas_kernels_note("", kAvx512, cluster::Environment()), "");
}

}  // namespace
}  // namespace hpctrain::runtime
