// Files from elsewhere are read only when they are regular files: a FIFO or
// a device planted where hpctrain or jobgen reads (meta.json, metrics.jsonl,
// a log the run record names) is refused at once instead of blocking for
// ever, and a bound is a bound even when the file grows.
#include "support/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <future>
#include <string>

#include "scratch_dir_test.h"
#include "support/bounded_file.h"

namespace hpctrain::support {
namespace {

using InputFileTest = unit::ScratchDirTest;

// Runs `read` on a thread; a read that blocks fails the test instead of hanging it.
template <typename Read>
std::string error_within_seconds(Read read) {
  auto result = std::async(std::launch::async, [read] {
    try {
      read();
      return std::string("no error");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
  });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "the read blocked";
    std::abort();  // the thread cannot be joined
  }
  return result.get();
}

TEST_F(InputFileTest, AFifoIsRefusedWithoutBlocking) {
  const auto fifo = dir_ / "meta.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string bounded = error_within_seconds([&] { (void)read_bounded_file(fifo, 1 << 20, "meta.json"); });
  EXPECT_EQ(bounded, fifo.string() + ": not a regular file, so not a meta.json");
  const std::string opened = error_within_seconds([&] { (void)InputFile::open_if_present(fifo, "log"); });
  EXPECT_EQ(opened, fifo.string() + ": not a regular file, so not a log");
}

TEST_F(InputFileTest, DevicesAndDirectoriesAreRefused) {
  EXPECT_EQ(error_within_seconds([] { (void)InputFile("/dev/zero", "metrics file"); }),
            "/dev/zero: not a regular file, so not a metrics file");
  EXPECT_EQ(error_within_seconds([&] { (void)InputFile(dir_, "log"); }),
            dir_.string() + ": not a regular file, so not a log");
}

TEST_F(InputFileTest, AbsentIsNothingOrAnError) {
  EXPECT_FALSE(InputFile::open_if_present(dir_ / "absent", "log").has_value());
  EXPECT_EQ(error_within_seconds([&] { (void)InputFile(dir_ / "absent", "log"); }),
            (dir_ / "absent").string() + ": no such log");
}

TEST_F(InputFileTest, ReadsRangesAndBoundsTheWholeFile) {
  const auto file = dir_ / "a.txt";
  std::ofstream(file) << "0123456789";
  const InputFile in(file, "text");
  EXPECT_EQ(in.size(), 10U);
  EXPECT_EQ(in.read_at(3, 4), "3456");
  EXPECT_EQ(in.read_at(8, 100), "89");
  EXPECT_EQ(in.read_at(20, 5), "");
  EXPECT_EQ(read_bounded_file(file, 10, "text"), "0123456789");
  EXPECT_NE(error_within_seconds([&] { (void)read_bounded_file(file, 9, "text"); }).find("more than a text may have"),
            std::string::npos);
}

}  // namespace
}  // namespace hpctrain::support
