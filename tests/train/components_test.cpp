// The trainer's components that talk to other ranks or look at the node,
// at any world size: the step agreement and the idle-GPU warning. Those that
// need neither are in local_components_test.cpp.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "comm/mpi_communicator.h"
#include "runtime/libtorch_build.h"
#include "train/run_setup.h"
#include "train/step_agreement.h"

namespace hpctrain::train {
namespace {

TEST(IdleGpusWarning, SpeaksWhenAutoChoseTheCpusOnANodeWithGpus) {
  const auto dev = std::filesystem::temp_directory_path() / ("fake-dev-" + std::to_string(getpid()));
  std::filesystem::create_directories(dev);
  for (const char* control : {"nvidiactl", "nvidia-uvm", "nvidia-modeset", "null"})
    std::ofstream(dev / control).flush();
  EXPECT_EQ(idle_gpus_warning(config::Device::kAuto, torch::kCPU, dev), "") << "control files are no GPUs";
  std::ofstream(dev / "nvidia0").flush();
  std::ofstream(dev / "nvidia1").flush();
  const std::string said = idle_gpus_warning(config::Device::kAuto, torch::kCPU, dev);
  EXPECT_NE(said.find("this node has 2 NVIDIA GPUs (" + (dev / "nvidia0").string() + ", ...)"), std::string::npos)
      << said;
  EXPECT_NE(said.find(runtime::libtorch_build().cuda ? "sees no GPU" : "is CPU-only"), std::string::npos) << said;
  EXPECT_EQ(idle_gpus_warning(config::Device::kCpu, torch::kCPU, dev), "") << "the CPU was asked for";
  EXPECT_EQ(idle_gpus_warning(config::Device::kAuto, torch::Device(torch::kCUDA, 0), dev), "");
  std::filesystem::remove_all(dev);
}

TEST(StepAgreement, SettlesInOrderWithTheMeanLossAnyStopAndAnySigterm) {
  comm::MpiCommunicator comm(MPI_COMM_WORLD, std::chrono::seconds(60));
  StepAgreement agreement(comm);
  const int rank = comm.rank();
  const int n = comm.size();
  agreement.post(1, {1.0 + rank, false, false});
  agreement.post(2, {2.0, rank == n - 1, rank == n - 1});  // only the last rank got SIGTERM
  agreement.post(3, {3.0, false, false});
  const auto first = agreement.settle_through(2);
  ASSERT_EQ(first.size(), 2U);
  EXPECT_EQ(first[0].step, 1);
  EXPECT_DOUBLE_EQ(first[0].mean_loss, 1.0 + (n - 1) / 2.0);
  EXPECT_FALSE(first[0].stop_requested);
  EXPECT_FALSE(first[0].terminated);
  EXPECT_TRUE(first[1].stop_requested);  // on every rank
  EXPECT_TRUE(first[1].terminated);      // on every rank: all skip the evaluation together
  const auto rest = agreement.settle_through(3);
  ASSERT_EQ(rest.size(), 1U);
  EXPECT_EQ(rest[0].step, 3);
  EXPECT_TRUE(agreement.settle_through(3).empty());
}

}  // namespace
}  // namespace hpctrain::train
