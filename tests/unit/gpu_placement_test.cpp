#include "cluster/gpu_placement.h"

#include <gtest/gtest.h>

#include "cluster/error.h"

namespace hpctrain::cluster {
namespace {

std::string refusal(const GpuPlacement& p, int gpus, const std::string& visible) {
  try {
    gpu_for_local_rank(p, gpus, visible);
  } catch (const ClusterError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(GpuPlacement, EachLocalRankTakesTheDeviceOfItsIndex) {
  EXPECT_EQ(gpu_for_local_rank({"gpu01", 0, 4}, 4, ""), 0);
  EXPECT_EQ(gpu_for_local_rank({"gpu01", 3, 4}, 4, ""), 3);
  EXPECT_EQ(gpu_for_local_rank({"gpu01", 1, 2}, 8, "4,5"), 1);  // fewer ranks than GPUs: the first ones
}

TEST(GpuPlacement, MoreRanksThanGpusOnANodeIsRefusedNamingTheNodeItsGpusAndRanks) {
  const std::string why = refusal({"gpu07", 1, 4}, 2, "0,1");
  EXPECT_NE(why.find("node gpu07 runs 4 ranks but has 2 visible GPUs (CUDA_VISIBLE_DEVICES=0,1)"), std::string::npos)
      << why;
  EXPECT_NE(why.find("--ntasks-per-node=2"), std::string::npos) << why;
  // Every rank on the node refuses, not only those past the last GPU.
  EXPECT_NE(refusal({"gpu07", 0, 4}, 2, "0,1"), "accepted");
}

TEST(GpuPlacement, NoVisibleGpuIsRefused) {
  EXPECT_EQ(refusal({"cpu3", 0, 1}, 0, ""), "node cpu3 has no visible GPU");
  EXPECT_EQ(refusal({"cpu3", 0, 1}, 0, "NoDevFiles"), "node cpu3 has no visible GPU (CUDA_VISIBLE_DEVICES=NoDevFiles)");
}

}  // namespace
}  // namespace hpctrain::cluster
