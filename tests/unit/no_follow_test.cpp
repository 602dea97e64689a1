// Writing where others can write: a new file is created only where nothing
// stands (not even a dangling link), a directory hpctrain writes into must be
// a real one, and a rename never replaces what stands at its target.
#include "support/no_follow.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>

#include "scratch_dir_test.h"

namespace hpctrain::support {
namespace {

class NoFollowTest : public unit::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    std::ofstream(dir_ / "victim") << "precious";
  }
  [[nodiscard]] std::string victim() const {
    std::ifstream in(dir_ / "victim");
    return {std::istreambuf_iterator<char>(in), {}};
  }
};

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST_F(NoFollowTest, ANewFileIsNeverCreatedThroughALinkOrOverAFile) {
  std::filesystem::create_symlink(dir_ / "victim", dir_ / "link");
  std::filesystem::create_symlink(dir_ / "absent", dir_ / "dangling");
  EXPECT_NE(error_of([&] { (void)create_new_file(dir_ / "link", "temporary"); }).find("a symbolic link stands there"),
            std::string::npos);
  EXPECT_NE(error_of([&] { (void)create_new_file(dir_ / "dangling", "temporary"); }), "no error");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "absent"));
  EXPECT_NE(error_of([&] { (void)create_new_file(dir_ / "victim", "temporary"); }).find("a regular file stands there"),
            std::string::npos);
  EXPECT_EQ(victim(), "precious");
  OwnedFd fd = create_new_file(dir_ / "new", "temporary");
  write_all(fd.get(), "abc", 3, "new");
  fd.close("new");
  EXPECT_EQ(std::filesystem::file_size(dir_ / "new"), 3U);
}

TEST_F(NoFollowTest, ADirectoryToWriteIntoMustBeARealOne) {
  EXPECT_NO_THROW(make_real_directory(dir_ / "shards", "shard directory"));
  EXPECT_NO_THROW(make_real_directory(dir_ / "shards", "shard directory"));  // already one
  std::filesystem::create_directories(dir_ / "elsewhere");
  std::filesystem::create_symlink(dir_ / "elsewhere", dir_ / "linked");
  EXPECT_NE(error_of([&] {
              make_real_directory(dir_ / "linked", "shard directory");
            }).find("cannot make the shard directory there: a symbolic link stands there"),
            std::string::npos);
  EXPECT_NE(error_of([&] { make_real_directory(dir_ / "victim", "shard directory"); }).find("a regular file"),
            std::string::npos);
}

TEST_F(NoFollowTest, ARenameNeverReplacesWhatStandsAtItsTarget) {
  std::ofstream(dir_ / "tmp") << "new";
  EXPECT_FALSE(rename_unless_taken(dir_ / "tmp", dir_ / "victim"));
  EXPECT_EQ(victim(), "precious");
  EXPECT_TRUE(rename_unless_taken(dir_ / "tmp", dir_ / "fresh"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "fresh"));
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(what_is_at(dir_ / "fifo"), "a FIFO");
  EXPECT_EQ(what_is_at(dir_ / "nothing here"), "nothing");
}

}  // namespace
}  // namespace hpctrain::support
