// The trainer's components that need no communicator and no other rank:
// the learning-rate schedule, the intervals next to their config and the
// step plan made of them, the batch geometry over any world, and the run
// log's records. One process, no mpiexec.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "optim/lr_schedule.h"
#include "train/batch_geometry.h"
#include "train/run_log.h"
#include "train/step_plan.h"

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

TEST(StepPlan, TheLoopAndTheStopAgreementReadOnePlan) {
  config::Experiment e;
  e.training.steps = 12;
  e.training.stop_after = 5;
  e.logging.interval = 3;
  e.eval.interval = 4;
  e.checkpoint.interval = 6;
  const StepPlan quiet = plan_step(e, 1);
  EXPECT_FALSE(quiet.last || quiet.stop_asked || quiet.record || quiet.evaluate || quiet.checkpoint);
  EXPECT_FALSE(quiet.needs_agreement_now()) << "settles a step late";
  EXPECT_TRUE(plan_step(e, 3).record);
  EXPECT_TRUE(plan_step(e, 3).needs_agreement_now());
  EXPECT_TRUE(plan_step(e, 4).evaluate);
  EXPECT_FALSE(plan_step(e, 4).checkpoint);
  EXPECT_TRUE(plan_step(e, 5).stop_asked);
  EXPECT_TRUE(plan_step(e, 5).needs_agreement_now());
  EXPECT_TRUE(plan_step(e, 6).checkpoint && plan_step(e, 6).record);
  const StepPlan last = plan_step(e, 12);
  EXPECT_TRUE(last.last && last.record && last.evaluate && last.checkpoint);
  EXPECT_FALSE(last.stop_asked);
  e.training.stop_after = 12;  // a stop at the last step is the last step
  EXPECT_FALSE(plan_step(e, 12).stop_asked);
  e.eval.interval = 0;
  e.checkpoint.interval = 0;
  EXPECT_FALSE(plan_step(e, 8).evaluate || plan_step(e, 6).checkpoint);
  EXPECT_TRUE(plan_step(e, 12).evaluate && plan_step(e, 12).checkpoint);
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
