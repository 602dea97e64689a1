// The checkpoint directory: newest-first order, keeping K, clearing the
// temporaries of killed writers, setting aside another history, and nothing
// else: others may write to this directory too, so nothing hpctrain did not
// write is deleted, and no link is followed to delete.
#include "ckpt_file/checkpoint_files.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/checkpoint_info.h"
#include "ckpt_file/hdf5_file.h"
#include "ckpt_file/shard_table.h"
#include "ckpt_file/verify.h"
#include "scratch_dir_test.h"

#include <algorithm>
#include <array>
#include <fstream>

namespace hpctrain::ckpt_file {
namespace {

class CheckpointFilesTest : public unit::ScratchDirTest {
 protected:
  void touch(const std::string& name) { std::ofstream(dir_ / name) << "x"; }
  // A checkpoint as hpctrain writes one (its root attributes, a /model
  // parameter, the manifest): it verifies. `step` is its step attribute,
  // whatever the name says.
  void checkpoint(const std::string& name, std::int64_t step, std::int64_t best_step = -1) {
    Hdf5Writer w(dir_ / name);
    w.attribute("format_version", kFormatVersion);
    w.attribute("step", step);
    w.attribute("world_size", std::int64_t{1});
    w.attribute("reducer", std::string("ddp"));
    for (const char* text : {"config", "tokenizer_sha256", "git_commit", "versions"}) w.attribute(text, std::string());
    if (best_step >= 0) {
      w.attribute("best_step", best_step);
      w.attribute("best_eval_loss", 1.5);
    }
    std::array<float, 4> weights{1, 2, 3, static_cast<float>(step)};
    w.arrays({{"model/w", ElementType::kFloat32, {4}, weights.data()}});
    w.finish();
  }
  [[nodiscard]] bool present(const std::string& name) const { return std::filesystem::exists(dir_ / name); }
};

// The pid of a process that has ended: no live process has it (until it is
// reused, which takes a full turn of the pid space).
pid_t pid_of_an_ended_process() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

std::vector<std::string> names(const std::vector<std::filesystem::path>& paths) {
  std::vector<std::string> out;
  out.reserve(paths.size());
  for (const auto& p : paths) out.push_back(p.filename().string());
  return out;
}

TEST_F(CheckpointFilesTest, ListsNewestFirstAndIgnoresOtherFiles) {
  for (std::int64_t step : {2, 100000000, 10, 99999999}) touch(checkpoint_file_name(step));
  touch("step-00000011.h5.tmp-123");
  touch("notes.txt");
  touch("step-abc.h5");
  touch("step-1.h5");          // not a name hpctrain gives: steps are padded to 8 digits
  touch("step-000000003.h5");  // nor more padding than that
  touch("step-+0000004.h5");
  std::filesystem::create_directories(dir_ / "step-00000005.h5");  // a directory
  EXPECT_EQ(names(list_checkpoints(dir_)), (std::vector<std::string>{"step-100000000.h5", "step-99999999.h5",
                                                                     "step-00000010.h5", "step-00000002.h5"}));
  EXPECT_TRUE(list_checkpoints(dir_ / "absent").empty());
}

TEST_F(CheckpointFilesTest, PruneKeepsTheNewestK) {
  for (std::int64_t step = 1; step <= 5; ++step) checkpoint(checkpoint_file_name(step), step);
  const Pruning pruning = prune_checkpoints(dir_, 2, dir_ / checkpoint_file_name(5));
  EXPECT_EQ(names(pruning.removed),
            (std::vector<std::string>{"step-00000003.h5", "step-00000002.h5", "step-00000001.h5"}));
  EXPECT_TRUE(pruning.left_alone.empty());
  EXPECT_EQ(names(list_checkpoints(dir_)), (std::vector<std::string>{"step-00000005.h5", "step-00000004.h5"}));
  EXPECT_TRUE(prune_checkpoints(dir_, 0, dir_ / checkpoint_file_name(5)).removed.empty());  // 0 keeps everything
  EXPECT_EQ(list_checkpoints(dir_).size(), 2U);
}

// A file named like a checkpoint is deleted only when hpctrain wrote it for
// that step: a user's notes, a checkpoint of another step renamed there, and
// a link (to a checkpoint elsewhere) stay, are named, and take no place among
// the `keep` newest.
TEST_F(CheckpointFilesTest, PruningDeletesOnlyWhatHpctrainWrote) {
  checkpoint(checkpoint_file_name(1), 1);
  std::ofstream(dir_ / checkpoint_file_name(2)) << "my notes";
  checkpoint(checkpoint_file_name(3), 7);
  const auto elsewhere = dir_.parent_path() / ("victim-" + std::to_string(getpid()) + ".h5");
  std::filesystem::remove(elsewhere);
  {
    Hdf5Writer w(elsewhere);
    w.attribute("step", std::int64_t{4});
    w.finish();
  }
  std::filesystem::create_symlink(elsewhere, dir_ / checkpoint_file_name(4));
  checkpoint(checkpoint_file_name(5), 5);
  checkpoint(checkpoint_file_name(6), 6);
  const Pruning pruning = prune_checkpoints(dir_, 2, dir_ / checkpoint_file_name(6));
  EXPECT_EQ(names(pruning.removed), (std::vector<std::string>{"step-00000001.h5"}));
  ASSERT_EQ(pruning.left_alone.size(), 3U);
  EXPECT_NE(pruning.left_alone[0].find("step-00000004.h5: not a checkpoint hpctrain wrote for step 4 (a symbolic link"),
            std::string::npos)
      << pruning.left_alone[0];
  for (const std::int64_t step : {2, 3, 4, 5, 6}) EXPECT_TRUE(present(checkpoint_file_name(step))) << step;
  EXPECT_TRUE(std::filesystem::exists(elsewhere));
  std::filesystem::remove(elsewhere);
}

// Pruning after a write never takes the file just written, whatever lies at
// higher steps (an unreadable file, an abandoned branch): those belong to
// another history and are not pruning's to delete either.
TEST_F(CheckpointFilesTest, PruningKeepsTheFileJustWrittenAndLeavesHigherStepsAlone) {
  std::ofstream(dir_ / checkpoint_file_name(99999999)) << "unreadable";
  checkpoint(checkpoint_file_name(8), 8);
  checkpoint(checkpoint_file_name(4), 4);
  checkpoint(checkpoint_file_name(2), 2);
  const Pruning pruning = prune_checkpoints(dir_, 1, dir_ / checkpoint_file_name(4));
  EXPECT_EQ(names(pruning.removed), (std::vector<std::string>{"step-00000002.h5"}));
  EXPECT_TRUE(present(checkpoint_file_name(4)));
  EXPECT_TRUE(present(checkpoint_file_name(8)));
  EXPECT_TRUE(present(checkpoint_file_name(99999999)));
}

TEST_F(CheckpointFilesTest, TheBestIsKeptBesideTheNewestK) {
  for (std::int64_t step = 1; step <= 4; ++step) checkpoint(checkpoint_file_name(step), step);
  const Pruning pruning = prune_checkpoints(dir_, 2, dir_ / checkpoint_file_name(4), dir_ / checkpoint_file_name(1));
  EXPECT_EQ(names(pruning.removed), (std::vector<std::string>{"step-00000002.h5"}));
  EXPECT_TRUE(present(checkpoint_file_name(1)));
  // Among the newest K, the best is one of them.
  EXPECT_EQ(names(prune_checkpoints(dir_, 2, dir_ / checkpoint_file_name(4), dir_ / checkpoint_file_name(3)).removed),
            (std::vector<std::string>{"step-00000001.h5"}));
}

TEST_F(CheckpointFilesTest, WrittenByHpctrainReadsTheStepNotTheName) {
  checkpoint("step-00000010.h5", 10);
  checkpoint("step-00000011.h5", 12);
  touch("step-00000013.h5");
  EXPECT_TRUE(written_by_hpctrain(dir_ / "step-00000010.h5", 10));
  EXPECT_FALSE(written_by_hpctrain(dir_ / "step-00000011.h5", 11));
  EXPECT_FALSE(written_by_hpctrain(dir_ / "step-00000013.h5", 13));
  EXPECT_FALSE(written_by_hpctrain(dir_ / "absent.h5", 1));
}

// A temporary goes when its writer is gone: a temporary named for a process
// that still runs (a write in progress), one whose suffix is no pid (a
// user's backup) and a link stay.
TEST_F(CheckpointFilesTest, RemovesOnlyTheTemporariesOfWritersThatAreGone) {
  const std::string dead = std::to_string(pid_of_an_ended_process());
  touch("step-00000004.h5.tmp-" + dead);
  touch("step-00000006.h5.tmp-" + std::to_string(getpid()));  // this process writes nothing yet: stale
  touch("step-00000004.h5");
  touch("step-00000004.h5.tmp-" + std::to_string(getppid()));  // a process that runs
  touch("step-00000004.h5.tmp-backup");
  std::filesystem::create_symlink(dir_ / "step-00000004.h5", dir_ / ("step-00000002.h5.tmp-" + dead));
  touch("model.safetensors.tmp-1");
  touch("other.h5.tmp-1");
  auto removed = names(remove_temporaries(dir_));
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{"step-00000004.h5.tmp-" + dead,
                                               "step-00000006.h5.tmp-" + std::to_string(getpid())}));
  const std::vector<std::string> stay = {"step-00000004.h5",
                                         "step-00000004.h5.tmp-" + std::to_string(getppid()),
                                         "step-00000004.h5.tmp-backup",
                                         "step-00000002.h5.tmp-" + dead,
                                         "model.safetensors.tmp-1",
                                         "other.h5.tmp-1"};
  for (const auto& name : stay) {
    EXPECT_TRUE(std::filesystem::is_symlink(dir_ / name) || present(name)) << name;
  }
}

// Beyond the step a run starts from lies another history: it is moved, never
// deleted, into one new directory, with the shards of an index and whatever
// else bears a checkpoint's name.
TEST_F(CheckpointFilesTest, WhatLiesBeyondTheStartIsSetAsideWhole) {
  checkpoint(checkpoint_file_name(2), 2);
  checkpoint(checkpoint_file_name(4), 4);
  std::filesystem::create_directories(dir_ / "step-00000004.shards");
  touch("step-00000004.shards/rank-00000.h5");
  std::ofstream(dir_ / checkpoint_file_name(6)) << "my notes";
  std::filesystem::create_directories(dir_ / checkpoint_file_name(8));
  touch("notes.txt");
  const SetAside aside = set_aside_after(dir_, 2);
  auto moved = names(aside.moved);
  EXPECT_EQ(moved, (std::vector<std::string>{"step-00000004.h5", "step-00000004.shards", "step-00000006.h5",
                                             "step-00000008.h5"}));
  EXPECT_EQ(aside.into.parent_path(), dir_);
  EXPECT_EQ(aside.into.filename().string().rfind("superseded-from-step-2-", 0), 0U) << aside.into;
  EXPECT_TRUE(present(checkpoint_file_name(2)));
  EXPECT_TRUE(present("notes.txt"));
  EXPECT_TRUE(std::filesystem::exists(aside.into / "step-00000004.shards/rank-00000.h5"));
  std::ifstream notes(aside.into / checkpoint_file_name(6));
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(notes), {}), "my notes");
  EXPECT_EQ(names(list_checkpoints(dir_)), (std::vector<std::string>{"step-00000002.h5"}));
  EXPECT_TRUE(set_aside_after(dir_, 2).moved.empty());
  // From scratch (-1), everything goes.
  EXPECT_EQ(names(set_aside_after(dir_, -1).moved), (std::vector<std::string>{"step-00000002.h5"}));
}

// Shards whose index never came (a rank died mid-write) go, and with them
// only the names hpctrain writes; a complete checkpoint's shards stay.
TEST_F(CheckpointFilesTest, RemovesShardsWithoutTheirIndexAndNothingElse) {
  std::filesystem::create_directories(dir_ / "step-00000008.shards");
  std::filesystem::create_directories(dir_ / "step-00000004.shards");
  touch("step-00000004.h5");
  touch("step-00000004.shards/rank-00000.h5");
  touch("step-00000008.shards/rank-00000.h5");
  touch("step-00000008.shards/rank-00001.h5.tmp-77");
  touch("step-00000008.shards/rank-100000.h5");  // ranks past 99999 have six digits
  touch("step-00000008.shards/rank-0001.h5");    // never written: too few digits
  touch("step-00000008.shards/notes.txt");
  auto removed = names(remove_temporaries(dir_));
  std::sort(removed.begin(), removed.end());
  EXPECT_EQ(removed, (std::vector<std::string>{"rank-00000.h5", "rank-00001.h5.tmp-77", "rank-100000.h5"}));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "step-00000004.shards/rank-00000.h5"));
  EXPECT_TRUE(
      std::filesystem::exists(dir_ / "step-00000008.shards/notes.txt"));  // not ours: it stays, and its directory
}

TEST_F(CheckpointFilesTest, PruningTakesTheShardsWithTheIndex) {
  for (std::int64_t step : {1, 2}) {
    checkpoint(checkpoint_file_name(step), step);
    std::filesystem::create_directories(dir_ / shard_directory(checkpoint_file_name(step)));
    touch((shard_directory(checkpoint_file_name(step)) / shard_file_name(0)).string());
  }
  EXPECT_EQ(names(prune_checkpoints(dir_, 1, dir_ / checkpoint_file_name(2)).removed),
            (std::vector<std::string>{"step-00000001.h5"}));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "step-00000001.shards"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "step-00000002.shards/rank-00000.h5"));
}

// --best follows the newest checkpoint's best_step to that step's file,
// which must verify and hold that step: a checkpoint of another step copied
// under its name is not the best.
TEST_F(CheckpointFilesTest, TheBestCheckpointMustHoldTheBestStep) {
  std::filesystem::create_directories(dir_ / "checkpoints");
  const auto run = dir_;
  dir_ = run / "checkpoints";
  checkpoint(checkpoint_file_name(2), 2);
  checkpoint(checkpoint_file_name(4), 4, 2);
  const auto skipped = [](const Verdict& v) { ADD_FAILURE() << skipped_message(v); };
  EXPECT_EQ(find_verified_best(run, skipped), dir_ / checkpoint_file_name(2));
  std::filesystem::remove(dir_ / checkpoint_file_name(2));
  checkpoint(checkpoint_file_name(2), 3);
  try {
    (void)find_verified_best(run, skipped);
    ADD_FAILURE() << "took a checkpoint of step 3 for the best, step 2";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("holds step 3, not the step"), std::string::npos) << e.what();
  }
  dir_ = run;
}

// The table an index stores names nothing but rank-RRRRR.h5 in order: no
// other file can be reached through it.
TEST(ShardTable, ReadsBackWhatItWritesAndRefusesOtherNames) {
  const std::string digest(64, 'a');
  const std::vector<ShardEntry> table = {{"rank-00000.h5", 10, digest}, {"rank-00001.h5", 20, digest}};
  const auto back = parse_shard_table(format_shard_table(table), 2, "f");
  ASSERT_EQ(back.size(), 2U);
  EXPECT_EQ(back[1].file, "rank-00001.h5");
  EXPECT_EQ(back[1].bytes, 20U);
  EXPECT_THROW((void)parse_shard_table(format_shard_table(table), 3, "f"), CheckpointError);
  EXPECT_THROW((void)parse_shard_table(format_shard_table(table), 1, "f"), CheckpointError);
  for (const std::string& bad :
       {"../rank-00000.h5 10 " + digest, "rank-00001.h5 10 " + digest, "rank-00000.h5 10 " + std::string(64, 'G'),
        std::string("rank-00000.h5 10"), "rank-00000.h5 x " + digest}) {
    EXPECT_THROW((void)parse_shard_table(bad + "\n", 1, "f"), CheckpointError) << bad;
  }
}

}  // namespace
}  // namespace hpctrain::ckpt_file
