// The trainer tests' fixture: a world (1 rank, or 2 under mpiexec), a work
// directory every rank shares, a tiny GPT experiment on the quickstart data
// set ($HPCTRAIN_TEST_DATA), and the run's metric records.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cluster/environment.h"
#include "comm/consensus.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "mpi_test_main.h"
#include "train/trainer.h"

namespace hpctrain::train {

namespace fs = std::filesystem;

class TrainerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* data = std::getenv("HPCTRAIN_TEST_DATA");  // NOLINT(concurrency-mt-unsafe): before any thread
    ASSERT_NE(data, nullptr) << "HPCTRAIN_TEST_DATA names the prepared quickstart data set";
    data_ = data;
    world_ = std::make_unique<comm::World>(testing::mpi_runtime(), env_, comm::WorldOptions{});
    // One directory for every rank: rank 0 names it.
    std::string dir = fs::temp_directory_path() / ("trainer-test-" + std::to_string(getpid()));
    dir = comm::broadcast_string(world_->comm(), dir, 0);
    work_ = dir;
  }
  void TearDown() override {
    world_->comm().barrier();
    if (world_->rank() == 0) fs::remove_all(work_);
  }

  // A tiny GPT on the quickstart data, 4 samples a step per rank, in RUN.
  config::Experiment experiment(const std::string& run, std::vector<std::string> overrides = {}) const {
    std::vector<std::string> all = {"data.dir=" + data_, "job.run_dir=" + (work_ / run).string(), "data.seq_len=32",
                                    "model.kind=gpt", "model.n_layer=1", "model.n_head=2", "model.d_model=32",
                                    "training.batch_size=" + std::to_string(4 * world_->size()),
                                    "training.micro_batch_size=4", "training.threads=1", "optimizer.lr=0.003",
                                    "schedule.warmup_steps=2", "eval.samples=8", "eval.final=sample",
                                    // The whole test split at the end of every run was most of
                                    // this binary's time; cli.checkpoint_eval_generate_and_refusals
                                    // checks the test split's loss.
                                    "eval.test=false", "eval.sample_tokens=0", "eval.interval=0",
                                    "checkpoint.interval=0", "checkpoint.keep_best=false"};
    all.insert(all.end(), overrides.begin(), overrides.end());
    return config::load_experiment(HPCTRAIN_SOURCE_DIR "/jobs/quickstart.toml", all);
  }

  // Records of `kind` in a run's metrics.jsonl: step -> record.
  std::map<std::int64_t, nlohmann::json> records(const std::string& run, const std::string& kind) const {
    std::map<std::int64_t, nlohmann::json> out;
    std::ifstream in(work_ / run / "metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j["kind"] == kind) out[j["step"].get<std::int64_t>()] = j;
    }
    return out;
  }

  struct StopAndResume {
    TrainSummary straight;
    TrainSummary stopped;
    std::int64_t resumed_at = 0;  // the resumed trainer's step before it ran
    TrainSummary resumed;
  };
  // `common` run straight through in RUN-straight; and in RUN-resumed stopped
  // after `stop_after` steps (training.stop_after), then resumed to the end.
  StopAndResume straight_and_resumed(const std::string& run, const std::vector<std::string>& common,
                                     std::int64_t stop_after) {
    StopAndResume r;
    {
      Trainer trainer(experiment(run + "-straight", common), *world_, env_);
      r.straight = trainer.run();
    }
    std::vector<std::string> stopped = common;
    stopped.push_back("training.stop_after=" + std::to_string(stop_after));
    {
      Trainer first(experiment(run + "-resumed", stopped), *world_, env_);
      r.stopped = first.run();
    }
    Trainer second(experiment(run + "-resumed", common), *world_, env_);
    r.resumed_at = second.step();
    r.resumed = second.run();
    return r;
  }

  static std::set<std::int64_t> steps_of(const std::map<std::int64_t, nlohmann::json>& r) {
    std::set<std::int64_t> s;
    for (const auto& [step, record] : r) s.insert(step);
    return s;
  }

  cluster::Environment env_ = cluster::Environment::current();
  std::unique_ptr<comm::World> world_;
  std::string data_;
  fs::path work_;
};

}  // namespace hpctrain::train
