// The checkpoint directory: newest-first order, keeping K, clearing the
// temporaries of killed writers and nothing else.
#include "ckpt_file/checkpoint_files.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/shard_table.h"

#include <algorithm>
#include <fstream>

namespace hpctrain::ckpt_file {
namespace {

class CheckpointFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ckpt-files-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void touch(const std::string& name) { std::ofstream(dir_ / name) << "x"; }
  std::filesystem::path dir_;
};

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
  EXPECT_EQ(names(list_checkpoints(dir_)), (std::vector<std::string>{"step-100000000.h5", "step-99999999.h5",
                                                                     "step-00000010.h5", "step-00000002.h5"}));
  EXPECT_TRUE(list_checkpoints(dir_ / "absent").empty());
}

TEST_F(CheckpointFilesTest, PruneKeepsTheNewestK) {
  for (std::int64_t step = 1; step <= 5; ++step) touch(checkpoint_file_name(step));
  EXPECT_EQ(names(prune_checkpoints(dir_, 2)),
            (std::vector<std::string>{"step-00000003.h5", "step-00000002.h5", "step-00000001.h5"}));
  EXPECT_EQ(names(list_checkpoints(dir_)), (std::vector<std::string>{"step-00000005.h5", "step-00000004.h5"}));
  EXPECT_TRUE(prune_checkpoints(dir_, 0).empty());  // 0 keeps everything
  EXPECT_EQ(list_checkpoints(dir_).size(), 2U);
}

TEST_F(CheckpointFilesTest, RemovesOnlyCheckpointTemporaries) {
  touch("step-00000004.h5.tmp-4242");
  touch("step-00000004.h5");
  touch("model.safetensors.tmp-1");
  touch("other.h5.tmp-1");
  EXPECT_EQ(names(remove_temporaries(dir_)), (std::vector<std::string>{"step-00000004.h5.tmp-4242"}));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "step-00000004.h5"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "model.safetensors.tmp-1"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "other.h5.tmp-1"));
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
    touch(checkpoint_file_name(step));
    std::filesystem::create_directories(dir_ / shard_directory(checkpoint_file_name(step)));
    touch((shard_directory(checkpoint_file_name(step)) / shard_file_name(0)).string());
  }
  EXPECT_EQ(names(prune_checkpoints(dir_, 1)), (std::vector<std::string>{"step-00000001.h5"}));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "step-00000001.shards"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "step-00000002.shards/rank-00000.h5"));
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
