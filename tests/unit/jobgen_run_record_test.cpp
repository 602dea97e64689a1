// The run directory as `jobgen status|logs|cancel` read it: the run record's
// lines (hostile ones named and skipped), the chain of job ids across
// requeues and resubmissions, sweeps, metrics and checkpoints.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "jobgen/run_record.h"
#include "jobgen/run_status.h"
#include "support/bounded_file.h"

namespace hpctrain::jobgen {
namespace {

class RunRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("run-record-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static void write(const std::filesystem::path& file, const std::string& text) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
  }

  std::filesystem::path dir_;
};

// As templates/sbatch.mustache writes them (fewer fields: absent ones are empty).
const char* const kRequeuedThenResubmitted =
    R"({"event":"start","job_id":"41","array_job_id":"","array_task_id":"","restarts":0,"log":"/l/a-41.out"})"
    "\n"
    R"({"event":"end","job_id":"41","restarts":0,"cause":"time_limit","outcome":"requeued","exit_status":75})"
    "\n"
    R"({"event":"start","job_id":"41","restarts":1,"log":"/l/a-41.out"})"
    "\n"
    R"({"event":"end","job_id":"41","restarts":1,"outcome":"resubmitted","exit_status":75,"next_job_id":"57"})"
    "\n";

TEST_F(RunRecordTest, TheChainOfJobIdsFollowsRequeuesAndResubmissions) {
  write(dir_ / "jobs.jsonl", kRequeuedThenResubmitted);
  const auto run = read_run(dir_);
  ASSERT_EQ(run.size(), 1U);
  EXPECT_EQ(run[0].index, "");
  EXPECT_EQ(run[0].events.size(), 4U);
  EXPECT_TRUE(run[0].skipped.empty());
  EXPECT_EQ(job_ids(run[0]), (std::vector<std::string>{"41", "57"}));
  EXPECT_FALSE(ended_for_good(run[0]));  // job 57 is yet to run
  EXPECT_EQ(recorded_state(run[0]), "resubmitted");
  write(dir_ / "jobs.jsonl", std::string(kRequeuedThenResubmitted) + R"({"event":"start","job_id":"57","restarts":2})" +
                                 "\n" + R"({"event":"end","job_id":"57","outcome":"finished","exit_status":0})" + "\n");
  EXPECT_TRUE(ended_for_good(read_run(dir_)[0]));
  EXPECT_EQ(recorded_state(read_run(dir_)[0]), "finished");
}

TEST_F(RunRecordTest, AResubmittedArrayTaskIsThatIndexOfTheNewArray) {
  write(
      dir_ / "jobs.jsonl",
      R"({"event":"start","job_id":"90","array_job_id":"88","array_task_id":"2"})"
      "\n"
      R"({"event":"end","job_id":"90","array_job_id":"88","array_task_id":"2","outcome":"resubmitted","next_job_id":"95"})"
      "\n");
  EXPECT_EQ(job_ids(read_run(dir_)[0]), (std::vector<std::string>{"88_2", "95_2"}));
}

TEST(SlurmId, JobIdsAndArrayTasksOnly) {
  for (const char* id : {"1", "123456789012", "88_2", "88_123456789"}) EXPECT_TRUE(is_slurm_id(id)) << id;
  for (const char* id : {"", "1234567890123", "88_", "_2", "88_2_3", "88__2", "88_1234567890", "8a", "1;id", "88 2"}) {
    EXPECT_FALSE(is_slurm_id(id)) << id;
  }
}

TEST_F(RunRecordTest, JobgenCancelEndsTheRunForGood) {
  write(dir_ / "jobs.jsonl", std::string(kRequeuedThenResubmitted) +
                                 R"({"event":"cancel","job_id":"57","cause":"cancel","outcome":"cancelled"})" + "\n");
  const auto run = read_run(dir_);
  EXPECT_TRUE(ended_for_good(run[0]));
  EXPECT_EQ(recorded_state(run[0]), "cancelled");
}

TEST_F(RunRecordTest, LinesThatAreNotRecordsAreNamedByLineAndSkipped) {
  write(dir_ / "jobs.jsonl",
        std::string(R"({"event":"start","job_id":"41"})") + "\n" + R"({"event":"start","job_id":"41; rm -rf ~"})" +
            "\n" +                                                               // 2: not a job id
            R"({"event":"start","job_id":"4","array_job_id":"4"})" + "\n" +      // 3: a task without its index
            R"x({"event":"end","job_id":"4","next_job_id":"$(id)"})x" + "\n" +   // 4
            R"({"event":"start","job_id":"4","log":"relative/x.out"})" + "\n" +  // 5
            R"({"event":"start","job_id":"4","restarts":-1})" + "\n" +           // 6
            R"({"event":"exec","job_id":"4"})" + "\n" +                          // 7
            "[1,2]\n" +                                                          // 8
            R"({"event":"end","job_id":"41","outcome":"fini)" + "\n" +           // 9: half a line
            std::string(kMaxRecordLine + 1, ' ') + "\n" +                        // 10
            std::string(5000, '[') + "\n");                                      // 11: deep nesting
  const auto run = read_run(dir_);
  ASSERT_EQ(run[0].events.size(), 1U);
  ASSERT_EQ(run[0].skipped.size(), 10U);
  for (std::size_t i = 0; i < run[0].skipped.size(); ++i) {
    EXPECT_NE(run[0].skipped[i].find("jobs.jsonl:" + std::to_string(i + 2) + ": not a run record"), std::string::npos)
        << run[0].skipped[i];
  }
  EXPECT_EQ(job_ids(run[0]), (std::vector<std::string>{"41"}));
}

TEST_F(RunRecordTest, ASweepHasOnePointPerManifestIndexStartedOrNot) {
  write(dir_ / "sweep-manifest.json", R"({"0": {"a": 1}, "1": {"a": 2}, "10": {"a": 3}})");
  write(dir_ / "1" / "jobs.jsonl", R"({"event":"start","job_id":"7","array_job_id":"5","array_task_id":"1"})"
                                   "\n");
  const auto run = read_run(dir_);
  ASSERT_EQ(run.size(), 3U);
  EXPECT_EQ(run[0].index, "0");
  EXPECT_EQ(run[1].index, "1");
  EXPECT_EQ(run[2].index, "10");  // numeric order
  EXPECT_EQ(recorded_state(run[0]), "submitted");
  EXPECT_EQ(job_ids(run[1]), (std::vector<std::string>{"5_1"}));
  write(dir_ / "sweep-manifest.json", R"({"../../etc": {}})");
  EXPECT_THROW((void)read_run(dir_), RunDirError);
}

TEST_F(RunRecordTest, ADirectoryThatIsNotARunIsRefusedByName) {
  try {
    (void)read_run(dir_);
    FAIL() << "an empty directory was taken for a run";
  } catch (const RunDirError& e) {
    EXPECT_NE(std::string(e.what()).find(dir_.string() + ": not a run directory"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)read_run(dir_ / "absent"), RunDirError);
}

TEST_F(RunRecordTest, ProgressIsTheNewestTrainAndEvalRecord) {
  std::string metrics;
  for (int step = 5; step <= 100; step += 5) {
    metrics += R"({"kind":"train","step":)" + std::to_string(step) +
               R"(,"loss":2.5,"tokens_per_s":1234.5,"steps_total":200,"eta_s":61})" + "\n";
    if (step % 50 == 0) metrics += R"({"kind":"eval","step":)" + std::to_string(step) + R"(,"eval_loss":3.25})" + "\n";
  }
  metrics += R"({"kind":"train","step":105,"lo)";  // being written
  write(dir_ / "metrics.jsonl", metrics);
  const Progress p = read_progress(dir_);
  EXPECT_EQ(p.step, 100);
  EXPECT_EQ(p.steps_total, 200);
  EXPECT_EQ(p.loss, 2.5);
  EXPECT_EQ(p.eval_loss, 3.25);
  EXPECT_EQ(p.tokens_per_s, 1234.5);
  EXPECT_EQ(p.eta_s, 61);
  EXPECT_FALSE(read_progress(dir_ / "absent").step.has_value());
}

TEST_F(RunRecordTest, OnlyTheTailOfALongMetricsFileIsRead) {
  {
    std::ofstream out(dir_ / "metrics.jsonl", std::ios::binary);
    const std::string filler = R"({"kind":"train","step":1,"loss":9})"
                               "\n";
    for (int i = 0; i < 100000; ++i) out << filler;  // 3.5 MB, more than the tail read
    out << R"({"kind":"train","step":77,"loss":1.5})"
        << "\n";
  }
  EXPECT_EQ(read_progress(dir_).step, 77);
  EXPECT_EQ(read_progress(dir_).loss, 1.5);
}

// metrics.jsonl is written by a run, and anyone in the project may write it:
// numbers out of any count's range, or of the wrong type, are no figure (a
// cast of 1e308 to an integer is undefined), and a FIFO in its place is
// refused instead of waited on for ever.
TEST_F(RunRecordTest, FiguresOutOfRangeAreNoFigures) {
  write(dir_ / "metrics.jsonl", R"({"kind":"train","step":12,"steps_total":40,"loss":2.5,"eta_s":30})"
                                "\n"
                                R"({"kind":"train","step":1e308,"steps_total":-3,"loss":1.0,"eta_s":1e300})"
                                "\n"
                                R"({"kind":"train","step":2.5,"steps_total":9007199254740993e3})"
                                "\n"
                                R"({"kind":17,"step":99})"
                                "\n"
                                R"({"kind":["train"],"step":99})"
                                "\n");
  const Progress p = read_progress(dir_);
  EXPECT_EQ(p.step, 12);
  EXPECT_EQ(p.steps_total, 40);
}

TEST_F(RunRecordTest, AFifoForMetricsIsRefusedNotWaitedOn) {
  ASSERT_EQ(::mkfifo((dir_ / "metrics.jsonl").c_str(), 0600), 0);
  try {
    (void)read_progress(dir_);
    ADD_FAILURE() << "read a FIFO";
  } catch (const support::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("metrics.jsonl: not a regular file"), std::string::npos) << e.what();
  }
}

TEST_F(RunRecordTest, TheNewestCheckpointIsTheHighestStepByName) {
  EXPECT_EQ(newest_checkpoint(dir_), "");
  for (const char* name : {"step-00000020.h5", "step-00000100.h5", "step-00000099.h5", "step-00000200.h5.tmp-12",
                           "step-123456789.h5", "notes.txt"}) {
    write(dir_ / "checkpoints" / name, "");
  }
  EXPECT_EQ(newest_checkpoint(dir_), "step-123456789.h5");
}

}  // namespace
}  // namespace hpctrain::jobgen
