// The trainer's components alone: the learning-rate schedule, the intervals
// next to their config, the step agreement, RunLog::resume_at, and the
// batch-geometry check.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "comm/mpi_communicator.h"
#include "config/experiment.h"
#include "optim/lr_schedule.h"
#include "runtime/libtorch_build.h"
#include "train/batch_geometry.h"
#include "train/metrics.h"
#include "train/run_setup.h"
#include "train/step_agreement.h"

namespace hpctrain::train {
namespace {

TEST(LrSchedule, WarmsUpThenDecaysToTheFloorAtTheLastStep) {
  config::ScheduleConfig s;
  s.warmup_steps = 4;
  s.min_lr_ratio = 0.1;
  const optim::LrSchedule cosine(s, 1.0, 20);
  EXPECT_DOUBLE_EQ(cosine.at(1), 0.25);  // step 1 of a 4-step warm-up
  EXPECT_DOUBLE_EQ(cosine.at(4), 1.0);
  EXPECT_DOUBLE_EQ(cosine.at(5), 1.0);     // decay starts from the peak
  EXPECT_DOUBLE_EQ(cosine.at(20), 0.1);    // and ends on the floor
  EXPECT_NEAR(cosine.at(12), 0.55, 0.06);  // about half way
  s.decay = config::Decay::kLinear;
  const optim::LrSchedule linear(s, 1.0, 20);
  EXPECT_DOUBLE_EQ(linear.at(20), 0.1);
  EXPECT_NEAR(linear.at(12), 1.0 - 0.9 * 7.0 / 15.0, 1e-12);
  s.decay = config::Decay::kConstant;
  EXPECT_DOUBLE_EQ(optim::LrSchedule(s, 1.0, 20).at(20), 1.0);
}

TEST(Intervals, EveryNStepsAndAlwaysAtTheLast) {
  config::EvalConfig eval;
  eval.interval = 4;
  EXPECT_TRUE(eval.should_eval(8, false));
  EXPECT_FALSE(eval.should_eval(9, false));
  EXPECT_TRUE(eval.should_eval(9, true));
  eval.interval = 0;  // only at the end
  EXPECT_FALSE(eval.should_eval(8, false));
  EXPECT_TRUE(eval.should_eval(8, true));
  config::CheckpointConfig checkpoint;
  checkpoint.interval = 5;
  EXPECT_TRUE(checkpoint.should_checkpoint(10, false));
  EXPECT_FALSE(checkpoint.should_checkpoint(11, false));
  config::LoggingConfig logging;
  logging.interval = 3;
  EXPECT_TRUE(logging.should_log(6, false));
  EXPECT_FALSE(logging.should_log(7, false));
  EXPECT_TRUE(logging.should_log(7, true));
}

TEST(BatchGeometry, SplitsAnyGlobalBatchOverAnyWorld) {
  config::Experiment e;
  e.training.batch_size = 16;
  e.training.micro_batch_size = 8;
  using Sizes = std::vector<std::size_t>;
  EXPECT_EQ(batch_geometry(e, 0, 1).micro, (Sizes{8, 8}));
  EXPECT_EQ(batch_geometry(e, 1, 2).micro, (Sizes{8}));
  EXPECT_EQ(batch_geometry(e, 0, 3).micro, (Sizes{6}));
  EXPECT_EQ(batch_geometry(e, 2, 3).micro, (Sizes{5}));
  EXPECT_EQ(batch_geometry(e, 7, 8).micro, (Sizes{2}));
  EXPECT_EQ(batch_geometry(e, 16, 32).micro, (Sizes{1}));
  EXPECT_TRUE(batch_geometry(e, 16, 32).stands_in());
  EXPECT_FALSE(batch_geometry(e, 15, 32).stands_in());
  e.training.batch_size = 10;
  e.training.micro_batch_size = 4;
  EXPECT_EQ(batch_geometry(e, 0, 1).micro, (Sizes{4, 3, 3}));  // as few as can be, as equal as can be
  // Even shapes divide the loss by micro-steps x ranks, as they always did.
  e.training.batch_size = 16;
  const BatchGeometry even = batch_geometry(e, 1, 2);
  EXPECT_EQ(even.micro, (Sizes{4, 4}));
  EXPECT_EQ(even.loss_divisor(1, true), 4.0);
  EXPECT_EQ(even.loss_divisor(1, false), 2.0);
  EXPECT_EQ(even.loss_weight(), 1.0);
  const BatchGeometry uneven = batch_geometry(e, 0, 3);      // 6 of 16
  EXPECT_DOUBLE_EQ(uneven.loss_divisor(0, true), 16.0 / 3);  // micro-batches 3 and 3
  EXPECT_DOUBLE_EQ(uneven.loss_weight(), 6.0 * 3 / 16);
  // DDAP's replicas need samples of their own.
  e.parallel.reducer = config::ReducerKind::kDdap;
  e.training.batch_size = 4;
  EXPECT_NO_THROW((void)batch_geometry(e, 0, 4));
  EXPECT_THROW((void)batch_geometry(e, 0, 8), std::runtime_error);
}

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

TEST(RunLog, ResumeDropsTheRecordsOfStepsThatRunAgain) {
  const auto dir = std::filesystem::temp_directory_path() / ("runlog-test-" + std::to_string(getpid()));
  {
    RunLog log(dir, 0);
    for (std::int64_t step = 1; step <= 6; ++step) log.record("train", step, {{"loss", 1.0}});
    log.record("eval", 4, {{"eval_loss", 1.0}});
    EXPECT_EQ(log.resume_at(4), 2U);  // steps 5 and 6
    log.record("train", 5, {{"loss", 2.0}});
  }
  std::ifstream in(dir / "metrics.jsonl");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 6);  // 1-4, eval 4, the new 5
  EXPECT_EQ(text.find("\"step\":6"), std::string::npos);
  EXPECT_NE(text.find("\"step\":5,\"loss\":2.0"), std::string::npos) << text;
  std::filesystem::remove_all(dir);
}

TEST(RunLog, CountsAreWrittenAsIntegersAndMeasurementsAsNumbers) {
  const auto dir = std::filesystem::temp_directory_path() / ("runlog-counts-" + std::to_string(getpid()));
  {
    RunLog log(dir, 0);
    log.record("eval", 340, {{"eval_loss", 4.0}, {"eval_tokens", Metric::count(65536)}});
  }
  std::ifstream in(dir / "metrics.jsonl");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, R"({"kind":"eval","step":340,"eval_loss":4.0,"eval_tokens":65536})");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hpctrain::train
