// What the trainer's evaluations measure, in-process at a world of 1 and,
// under mpiexec, 2:
//  - a validation split whose first documents are easy (one sentence
//    repeated) and whose rest is not: the periodic sample and the final
//    evaluation agree with the whole split, where reading the split's first
//    sequences (the rule evaluations used to follow) does not;
//  - evaluating never changes training, under DDP and DDAP;
//  - checkpoint.keep_best keeps the checkpoint of the lowest evaluation
//    across a resume, and --best finds it;
//  - the moving average of the weights resumes bit for bit and is evaluated
//    beside the raw weights.
#include <gtest/gtest.h>
#include <torch/types.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "ckpt_file/checkpoint_files.h"
#include "ckpt_file/verify.h"
#include "data/tokenizer.h"
#include "model/language_model.h"
#include "train/evaluator.h"
#include "train/trained_model.h"
#include "train/trainer.h"
#include "train/weight_average.h"
#include "trainer_fixture.h"

namespace hpctrain::train {
namespace {

// A corpus whose validation split starts with easy documents: files are read
// in name order and each split keeps that order, so the "0-easy" files come
// first. Easy: one sentence repeated (a model learns it within a few steps);
// hard: words drawn at random from 400 made-up ones.
void write_easy_then_hard_corpus(const fs::path& dir) {
  fs::create_directories(dir);
  for (int d = 0; d < 60; ++d) {
    std::ofstream out(dir / ("0-easy-" + std::to_string(1000 + d) + ".txt"));
    out << "document " << d << "\n";
    for (int i = 0; i < 60; ++i) out << "the cat sat on the mat. ";
    out << "\n";
  }
  std::mt19937 random(7);
  std::vector<std::string> words;
  for (int w = 0; w < 400; ++w) {
    std::string word;
    const int letters = 3 + static_cast<int>(random() % 6);
    for (int l = 0; l < letters; ++l) word += static_cast<char>('a' + random() % 26);
    words.push_back(word);
  }
  for (int d = 0; d < 140; ++d) {
    std::ofstream out(dir / ("1-hard-" + std::to_string(1000 + d) + ".txt"));
    for (int i = 0; i < 300; ++i) out << words[random() % words.size()] << (i % 12 == 11 ? ".\n" : " ");
  }
}

double relative(double a, double b) { return std::abs(a - b) / std::abs(b); }

TEST_F(TrainerTest, TheSampleIsSpreadOverTheSplitAndNotFooledByAnEasyStart) {
  const fs::path corpus = work_ / "easy-then-hard-corpus";
  if (world_->rank() == 0) write_easy_then_hard_corpus(corpus);
  world_->comm().barrier();
  constexpr std::int64_t kSamples = 96;
  const auto e = experiment(
      "easy-start",
      {"data.dir=" + (work_ / "easy-then-hard-data").string(), "data.sources=[\"" + corpus.string() + "\"]",
       "data.glob=\"*.txt\"", "data.vocab_size=400", "data.validation_fraction=0.3", "data.tokenizer_max_lines=1000",
       "training.steps=40", "optimizer.lr=0.02", "eval.interval=10", "eval.samples=" + std::to_string(kSamples),
       "eval.final=\"full\"", "checkpoint.interval=10", "checkpoint.keep=0"});
  {
    Trainer trainer(e, *world_, env_);
    (void)trainer.run();
  }
  world_->comm().barrier();  // rank 0's records are on disk for every rank
  const auto tokenizer = data::Tokenizer::load(fs::path(e.data.dir) / "tokenizer.model");
  const Evaluator evaluator(e, &tokenizer);
  const std::size_t population = evaluator.validation().size();
  ASSERT_GT(population, 4 * static_cast<std::size_t>(kSamples));
  // The rule evaluations followed before: the split's first sequences.
  std::vector<std::uint64_t> prefix(kSamples);
  for (std::size_t i = 0; i < prefix.size(); ++i) prefix[i] = i;

  // The stated tolerance: the sample's loss within 3% of the whole split's.
  constexpr double kTolerance = 0.03;
  const auto periodic = records("easy-start", "eval");
  ASSERT_EQ(steps_of(periodic), (std::set<std::int64_t>{10, 20, 30, 40}));
  for (const auto& [step, record] : periodic) {
    auto trained = load_trained_model(ckpt::checkpoint_path(e.job.run_dir, step), {}, [](const auto&) {});
    const EvalResult full = evaluator.full(*trained.model, world_->comm());
    const data::MlmMasking masking = data::make_mlm_masking(e.data, e.job.seed, &tokenizer);
    const EvalResult first = summarize(score_sequences(*trained.model, evaluator.validation(), prefix, masking,
                                                       e.training.micro_batch_size, false, world_->comm()));
    const double sampled = record["eval_loss"].get<double>();
    EXPECT_EQ(record["eval_sequences"].get<std::int64_t>(), kSamples);
    EXPECT_LT(relative(sampled, full.loss), kTolerance)
        << "step " << step << ": sample " << sampled << ", whole split " << full.loss;
    EXPECT_GT(relative(first.loss, full.loss), kTolerance)
        << "step " << step << ": the first sequences " << first.loss << ", whole split " << full.loss;
    if (step == 40) {
      // The final evaluation read the whole split.
      const auto final_record = records("easy-start", "eval_full").at(40);
      EXPECT_EQ(final_record["eval_loss"].get<double>(), full.loss);
      EXPECT_EQ(final_record["eval_sequences"].get<std::size_t>(), population);
      EXPECT_EQ(final_record["eval_full"].get<double>(), 1.0);
    }
    if (world_->rank() == 0) {
      std::printf("step %2lld: whole split %.4f, sample %.4f (%+.1f%%), first %lld sequences %.4f (%+.1f%%)\n",
                  static_cast<long long>(step), full.loss, sampled, 100 * (sampled / full.loss - 1),
                  static_cast<long long>(kSamples), first.loss, 100 * (first.loss / full.loss - 1));
    }
  }
}

TEST_F(TrainerTest, EvaluatingNeverChangesTraining) {
  for (const std::vector<std::string>& reducer :
       {std::vector<std::string>{"parallel.reducer=\"ddp\""},
        std::vector<std::string>{"parallel.reducer=\"ddap\"", "parallel.merge=\"diloco\"",
                                 "parallel.merge_mode=\"overlapped\"", "parallel.merge_every=3",
                                 "parallel.merge_delay=1"}}) {
    const std::string name = reducer[0].find("ddap") != std::string::npos ? "ddap" : "ddp";
    std::vector<std::string> rarely = reducer;
    rarely.insert(rarely.end(), {"training.steps=8", "eval.interval=0", "training.ema_decay=0.5"});
    std::vector<std::string> often = reducer;
    often.insert(often.end(), {"training.steps=8", "eval.interval=1", "training.ema_decay=0.5"});
    Trainer a(experiment(name + "-eval-at-end", rarely), *world_, env_);
    Trainer b(experiment(name + "-eval-every-step", often), *world_, env_);
    EXPECT_EQ(a.run().weights_sha256, b.run().weights_sha256) << name;
    if (world_->rank() == 0) {
      EXPECT_EQ(records(name + "-eval-every-step", "eval").size(), 8U) << name;
      EXPECT_EQ(records(name + "-eval-at-end", "eval").size(), 1U) << name;
    }
  }
}

TEST_F(TrainerTest, KeepBestKeepsTheLowestEvaluationAcrossAResume) {
  // Steps 1-4 learn (the fixture's learning rate); the resume raises it to 1,
  // which wrecks the model within a step whatever the corpus (a diverging
  // rate from the start left the best evaluation to chance: on a new
  // machine's corpus, bench/ci-cold.sh's, it came at step 6). So the best evaluation comes at step
  // 2 or 4, before the stop at step 4 and the resume, and its checkpoint must
  // outlive checkpoint.keep = 1.
  const std::vector<std::string> common = {"training.steps=8",        "eval.interval=2",
                                           "schedule.warmup_steps=0", "schedule.decay=\"constant\"",
                                           "checkpoint.keep=1",       "checkpoint.keep_best=true"};
  std::vector<std::string> stopped = common;
  stopped.emplace_back("training.stop_after=4");
  std::vector<std::string> wrecked = common;
  wrecked.emplace_back("optimizer.lr=1.0");
  {
    Trainer first(experiment("best", stopped), *world_, env_);
    (void)first.run();
  }
  {
    Trainer second(experiment("best", wrecked), *world_, env_);
    EXPECT_EQ(second.step(), 4);
    (void)second.run();
  }
  world_->comm().barrier();  // rank 0's records are on disk for every rank
  const auto evals = records("best", "eval");
  ASSERT_EQ(steps_of(evals), (std::set<std::int64_t>{2, 4, 6, 8}));
  std::int64_t best = 0;
  double lowest = 0;
  for (const auto& [step, record] : evals) {
    const double loss = record["eval_loss"].get<double>();
    if (best == 0 || loss < lowest) {
      best = step;
      lowest = loss;
    }
  }
  ASSERT_LE(best, 4) << "the test needs its best evaluation before the resume";
  const fs::path dir = work_ / "best" / "checkpoints";
  // keep = 1: the newest, and the best beside it.
  const auto kept = ckpt_file::list_checkpoints(dir);
  ASSERT_EQ(kept.size(), 2U);
  EXPECT_EQ(kept[0].filename(), ckpt_file::checkpoint_file_name(8));
  EXPECT_EQ(kept[1].filename(), ckpt_file::checkpoint_file_name(best));
  EXPECT_EQ(ckpt_file::find_verified_best(work_ / "best", [](const auto&) {}), kept[1]);
  // Its weights are the ones that were evaluated: the same sample, the same loss.
  auto trained = load_trained_model(work_ / "best", {}, [](const auto&) {}, {.best = true});
  EXPECT_EQ(trained.info.step, best);
  const Evaluator evaluator(trained.experiment, &*trained.tokenizer);
  EXPECT_EQ(evaluator.periodic(*trained.model, world_->comm()).sample.loss, lowest);
}

TEST_F(TrainerTest, TheMovingAverageResumesBitExactlyAndIsEvaluatedBesideTheWeights) {
  const auto r = straight_and_resumed(
      "ema", {"training.steps=6", "eval.interval=3", "training.ema_decay=0.8", "checkpoint.keep=0"}, 3);
  EXPECT_EQ(r.resumed.weights_sha256, r.straight.weights_sha256);
  if (world_->rank() != 0) return;
  // A model of the run's shape, to read parameters by name.
  const auto vocab = data::Tokenizer::load(fs::path(data_) / "tokenizer.model").vocab_size();
  const auto model = model::make_model(experiment("ema-straight").model, vocab);
  const model::LanguageModel& shape = *model;
  // The averages in the final checkpoints, bit for bit.
  const auto average = [&](const std::string& run) {
    const ckpt::CheckpointReader c(ckpt::checkpoint_path(work_ / run, 6));
    return ckpt::read_flat_parameters(c, WeightAverage::kGroup, shape);
  };
  const torch::Tensor straight = average("ema-straight");
  const torch::Tensor resumed = average("ema-resumed");
  EXPECT_TRUE(torch::equal(straight, resumed));
  // Not the weights themselves, and evaluated beside them.
  const ckpt::CheckpointReader c(ckpt::checkpoint_path(work_ / "ema-straight", 6));
  EXPECT_FALSE(torch::equal(straight, ckpt::read_flat_parameters(c, "model", shape)));
  const auto straight_evals = records("ema-straight", "eval");
  const auto resumed_evals = records("ema-resumed", "eval");
  for (const std::int64_t step : {3, 6}) {
    const auto& record = straight_evals.at(step);
    EXPECT_NE(record["ema_eval_loss"].get<double>(), record["eval_loss"].get<double>()) << "step " << step;
    EXPECT_EQ(record["ema_eval_loss"].get<double>(), resumed_evals.at(step)["ema_eval_loss"].get<double>())
        << "step " << step;
  }
}

}  // namespace
}  // namespace hpctrain::train
