// The Trainer in-process, on a tiny GPT over the quickstart data set
// ($HPCTRAIN_TEST_DATA), at a world of 1 and, under mpiexec, 2: its schedule
// of records, evaluations and checkpoints, resume, accumulation, the
// checkpoint state of each component and the geometry checks. Its steps
// against PyTorch's are in pytorch_reference_test.cpp.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "ckpt_file/checkpoint_files.h"
#include "cluster/environment.h"
#include "comm/consensus.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "data/tokenizer.h"
#include "mpi_test_main.h"
#include "train/trainer.h"
#include "train/training_data.h"
#include "train/weights.h"
#include "trainer_fixture.h"

namespace hpctrain::train {
namespace {

namespace fs = std::filesystem;

TEST_F(TrainerTest, RecordsEvaluationsAndCheckpointsFollowTheirIntervalsAndTheLastStep) {
  const auto e = experiment("intervals", {"training.steps=10", "logging.interval=3", "eval.interval=4",
                                          "checkpoint.interval=5", "checkpoint.keep=0"});
  Trainer trainer(e, *world_, env_);
  const TrainSummary summary = trainer.run();
  EXPECT_EQ(summary.steps, 10);
  ASSERT_TRUE(summary.final_eval.has_value());
  if (world_->rank() != 0) return;
  EXPECT_EQ(steps_of(records("intervals", "train")), (std::set<std::int64_t>{3, 6, 9, 10}));
  EXPECT_EQ(steps_of(records("intervals", "eval")), (std::set<std::int64_t>{4, 8, 10}));
  EXPECT_EQ(steps_of(records("intervals", "summary")), (std::set<std::int64_t>{10}));
  const auto checkpoints = ckpt_file::list_checkpoints(work_ / "intervals" / "checkpoints");
  ASSERT_EQ(checkpoints.size(), 2U);
  EXPECT_EQ(checkpoints[0].filename(), ckpt_file::checkpoint_file_name(10));
  EXPECT_EQ(checkpoints[1].filename(), ckpt_file::checkpoint_file_name(5));
  // The final evaluation is the one recorded at the last step.
  EXPECT_EQ(records("intervals", "eval").at(10)["eval_loss"].get<double>(), summary.final_eval->loss);
}

TEST_F(TrainerTest, AStopAndAResumeEndWhereAStraightRunEnds) {
  const auto runs = straight_and_resumed("stop", {"training.steps=6", "logging.interval=1", "eval.interval=2"}, 3);
  EXPECT_EQ(runs.stopped.steps, 3);
  EXPECT_FALSE(runs.stopped.preempted);
  EXPECT_FALSE(runs.stopped.final_eval.has_value());
  EXPECT_EQ(runs.resumed_at, 3);
  EXPECT_EQ(runs.resumed.weights_sha256, runs.straight.weights_sha256);
  if (world_->rank() != 0) return;
  // Every record of the straight run, bit for bit, but the speeds.
  auto strip = [](std::map<std::int64_t, nlohmann::json> r) {
    for (auto& [step, record] : r) {
      for (const char* key : {"tokens_per_s", "mfu", "eta_s", "train_s", "wall_max_s"}) record.erase(key);
    }
    return r;
  };
  for (const char* kind : {"train", "eval"}) {
    EXPECT_EQ(strip(records("stop-resumed", kind)), strip(records("stop-straight", kind))) << kind;
  }
}

TEST_F(TrainerTest, EachComponentRestoresItsCheckpointState) {
  std::string sha;
  {
    Trainer trainer(experiment("state", {"training.steps=8", "training.stop_after=3"}), *world_, env_);
    sha = trainer.run().weights_sha256;
  }
  // A new trainer over the same run resumes: the model's weights, the step,
  // and (through the next steps) the optimizer, sampler and RNG.
  Trainer resumed(experiment("state", {"training.steps=8"}), *world_, env_);
  EXPECT_EQ(resumed.step(), 3);
  EXPECT_EQ(weights_sha256(resumed.model()), sha);
  Trainer fresh(experiment("state-fresh", {"training.steps=8", "checkpoint.resume=\"never\""}), *world_, env_);
  EXPECT_EQ(fresh.step(), 0);
  for (int s = 0; s < 3; ++s) (void)fresh.train_step();
  EXPECT_EQ(weights_sha256(fresh.model()), sha);
  // The next step from either continues identically: AdamW's moments, the
  // sampler's position and the RNG came back too.
  (void)fresh.train_step();
  (void)resumed.train_step();
  EXPECT_EQ(weights_sha256(fresh.model()), weights_sha256(resumed.model()));
}

// Trains `whole` and `split` three steps side by side, expecting the same
// losses; returns how far their weights then differ, relative.
double train_side_by_side(Trainer& whole, Trainer& split) {
  for (int s = 0; s < 3; ++s) {
    const StepResult a = whole.train_step();
    const StepResult b = split.train_step();
    EXPECT_NEAR(a.loss, b.loss, 1e-5 * std::abs(a.loss)) << "step " << s + 1;
  }
  const auto flat = [](model::LanguageModel& m) {
    std::vector<torch::Tensor> pieces;
    for (const auto& p : m.parameters()) pieces.push_back(p.detach().flatten());
    return torch::cat(pieces);
  };
  const torch::Tensor wa = flat(whole.model());
  const torch::Tensor wb = flat(split.model());
  return ((wa - wb).norm() / wa.norm()).item<double>();
}

TEST_F(TrainerTest, AccumulationEqualsOneMicroBatchOfTheWholeStep) {
  Trainer whole(experiment("whole", {"training.steps=3"}), *world_, env_);
  Trainer split(experiment("split", {"training.steps=3", "training.micro_batch_size=2"}), *world_, env_);
  const double difference = train_side_by_side(whole, split);
  // Not bitwise: two micro-batches sum their gradients in another order.
  EXPECT_LT(difference, 1e-5);
  EXPECT_GT(difference, 0);
}

TEST_F(TrainerTest, UnevenSharesAndMicroBatchesGiveTheGradientOfTheWholeBatch) {
  // 4 x ranks + 1 samples: under mpiexec -n 2 the shares are 5 and 4, and
  // micro-batches of up to 2 split them 2+2+1 and 2+2; each must weigh by its
  // size, or the step differs from one micro-batch per rank by far more than
  // rounding.
  const std::string batch = "training.batch_size=" + std::to_string(4 * world_->size() + 1);
  Trainer whole(experiment("whole", {"training.steps=3", batch, "training.micro_batch_size=64"}), *world_, env_);
  Trainer split(experiment("split", {"training.steps=3", batch, "training.micro_batch_size=2"}), *world_, env_);
  EXPECT_LT(train_side_by_side(whole, split), 1e-5);
}

}  // namespace
}  // namespace hpctrain::train
