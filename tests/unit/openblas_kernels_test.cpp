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
  const std::string slow =
      "OpenBLAS kernels Prescott, short of this CPU's AVX-512: matmuls run at about a fifth of their rate; ";
  // The advice fits why the kernels run: the user's variable, ...
  EXPECT_EQ(openblas_kernels_note("Prescott", kAvx512, cluster::Environment(Vars{{"OPENBLAS_CORETYPE", "Prescott"}})),
            slow +
                "the environment sets OPENBLAS_CORETYPE=Prescott: set it to SkylakeX instead, or unset it for "
                "hpctrain to choose");
  // ... no restart (unset: "leave it unset" would change nothing), ...
  EXPECT_EQ(openblas_kernels_note("Prescott", kAvx512, cluster::Environment()),
            slow +
                "hpctrain could not restart itself with OPENBLAS_CORETYPE=SkylakeX (started through the dynamic "
                "loader?): set it in the environment");
  // ... a restart OpenBLAS ignored, and a build for one CPU, which no variable changes.
  EXPECT_EQ(openblas_kernels_note(
                "Prescott", kAvx512,
                cluster::Environment(Vars{{"OPENBLAS_CORETYPE", "SkylakeX"}, {"HPCTRAIN_OPENBLAS_CHOSE", "Prescott"}})),
            slow +
                "hpctrain set OPENBLAS_CORETYPE=SkylakeX and OpenBLAS still runs Prescott: this OpenBLAS does not "
                "take it; set OPENBLAS_CORETYPE yourself to a core it knows");
  EXPECT_EQ(openblas_kernels_note("Prescott", kAvx512, cluster::Environment(), false),
            slow +
                "this OpenBLAS was built for one CPU (its config has no DYNAMIC_ARCH), so OPENBLAS_CORETYPE changes "
                "nothing: install one built with DYNAMIC_ARCH, as Debian's libopenblas0 is");
  EXPECT_EQ(openblas_kernels_note("", kAvx512, cluster::Environment()), "");
}

}  // namespace
}  // namespace hpctrain::runtime
