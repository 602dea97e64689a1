#include "cluster/gpu_placement.h"

#include <gtest/gtest.h>

#include "cluster/error.h"

namespace hpctrain::cluster {
namespace {

GpuPlacement on(const std::string& host, int local_rank, int local_size, const std::string& visible = "",
                bool own_devices = false) {
  return {host, local_rank, local_size, visible, own_devices};
}

std::string refusal(const GpuPlacement& p, int gpus) {
  try {
    gpu_for_local_rank(p, gpus);
  } catch (const ClusterError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(GpuPlacement, EachLocalRankTakesTheDeviceOfItsIndex) {
  EXPECT_EQ(gpu_for_local_rank(on("gpu01", 0, 4), 4), 0);
  EXPECT_EQ(gpu_for_local_rank(on("gpu01", 3, 4), 4), 3);
  EXPECT_EQ(gpu_for_local_rank(on("gpu01", 1, 2, "4,5"), 2), 1);
  EXPECT_EQ(gpu_for_local_rank(on("gpu01", 1, 2), 8), 1);  // fewer ranks than GPUs: the first ones
}

TEST(GpuPlacement, MoreRanksThanSharedGpusOnANodeIsRefusedNamingTheNodeItsGpusAndRanks) {
  const std::string why = refusal(on("gpu07", 1, 4, "0,1"), 2);
  EXPECT_NE(why.find("node gpu07 runs 4 ranks but its ranks share 2 visible GPUs (CUDA_VISIBLE_DEVICES=0,1)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("start at most 2 tasks per node"), std::string::npos) << why;
  // Every rank on the node refuses, not only those past the last GPU.
  EXPECT_NE(refusal(on("gpu07", 0, 4, "0,1"), 2), "accepted");
}

TEST(GpuPlacement, RanksWithADeviceOfTheirOwnTakeTheirFirst) {
  // srun --gpus-per-task=1: each of 4 ranks sees one GPU, its own.
  EXPECT_EQ(gpu_for_local_rank(on("gpu02", 3, 4, "3", true), 1), 0);
  EXPECT_TRUE(devices_bound_per_rank({"a", "a", "b", "b"}, {"0", "1", "0", "1"}, "a"));
  // The same view twice on a node, or a rank without one, is a shared view.
  EXPECT_FALSE(devices_bound_per_rank({"a", "a", "b"}, {"0", "0", "1"}, "a"));
  EXPECT_FALSE(devices_bound_per_rank({"a", "a"}, {"0", ""}, "a"));
  EXPECT_NE(refusal(on("gpu02", 3, 4, "0"), 1).find("node gpu02 runs 4 ranks but its ranks share 1 visible GPU"),
            std::string::npos);
}

TEST(GpuPlacement, NoVisibleGpuIsRefused) {
  EXPECT_EQ(refusal(on("cpu3", 0, 1), 0), "node cpu3 has no visible GPU");
  EXPECT_EQ(refusal(on("cpu3", 0, 1, "NoDevFiles"), 0),
            "node cpu3 has no visible GPU (CUDA_VISIBLE_DEVICES=NoDevFiles)");
}

}  // namespace
}  // namespace hpctrain::cluster
