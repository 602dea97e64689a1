#include "cluster/slurm_env.h"

#include <gtest/gtest.h>

#include "cluster/error.h"

namespace hpctrain::cluster {
namespace {

using Vars = std::map<std::string, std::string>;

// What srun -N2 -n3 gives task 2 (on the second node).
Environment step_env() {
  return Environment({{"SLURM_JOB_ID", "42"},
                      {"SLURM_JOB_NODELIST", "node[1-2]"},
                      {"SLURM_STEP_ID", "0"},
                      {"SLURM_STEP_NODELIST", "node[1-2]"},
                      {"SLURM_STEP_NUM_TASKS", "3"},
                      {"SLURM_STEP_TASKS_PER_NODE", "2,1"},
                      {"SLURM_PROCID", "2"},
                      {"SLURM_LOCALID", "0"},
                      {"SLURM_NODEID", "1"},
                      {"SLURM_RESTART_COUNT", "1"}});
}

std::string error_of(const Environment& env) {
  try {
    SlurmEnv::detect(env);
  } catch (const ClusterError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SlurmEnv, AbsentOutsideSlurm) { EXPECT_FALSE(SlurmEnv::detect(Environment(Vars{{"HOME", "/root"}})).has_value()); }

TEST(SlurmEnv, ReadsAStep) {
  const auto s = SlurmEnv::detect(step_env());
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->job_id, "42");
  EXPECT_TRUE(s->in_step);
  EXPECT_EQ(s->nodes, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_EQ(s->tasks_per_node, (std::vector<int>{2, 1}));
  EXPECT_EQ(s->num_tasks, 3);
  EXPECT_EQ(s->proc_id, 2);
  EXPECT_EQ(s->node_id, 1);
  EXPECT_EQ(s->restart_count, 1);
  EXPECT_EQ(s->head_node(), "node1");
}

TEST(SlurmEnv, ReadsTheBatchShellWithRepeatedTaskCounts) {
  const auto s = SlurmEnv::detect(Environment({{"SLURM_JOB_ID", "7"},
                                               {"SLURM_JOB_NODELIST", "gpu[01-04]"},
                                               {"SLURM_TASKS_PER_NODE", "2(x3),1"},
                                               {"SLURM_NTASKS", "7"}}));
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->in_step);
  EXPECT_EQ(s->tasks_per_node, (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(s->num_tasks, 7);
  EXPECT_EQ(s->head_node(), "gpu01");
}

TEST(SlurmEnv, NamesMissingVariables) {
  Environment env(Vars{{"SLURM_JOB_ID", "42"}});
  EXPECT_NE(error_of(env).find("SLURM_JOB_NODELIST is not set"), std::string::npos) << error_of(env);
}

TEST(SlurmEnv, NamesMalformedValues) {
  auto env = step_env();
  env.set("SLURM_PROCID", "two");
  EXPECT_NE(error_of(env).find("SLURM_PROCID='two'"), std::string::npos) << error_of(env);
  env = step_env();
  env.set("SLURM_STEP_NODELIST", "node[2-1]");
  EXPECT_NE(error_of(env).find("SLURM_STEP_NODELIST"), std::string::npos) << error_of(env);
}

TEST(SlurmEnv, RejectsContradictions) {
  auto env = step_env();
  env.set("SLURM_PROCID", "3");
  EXPECT_NE(error_of(env).find("SLURM_PROCID=3 is not below the task count 3"), std::string::npos) << error_of(env);

  env = step_env();
  env.set("SLURM_STEP_TASKS_PER_NODE", "2(x2)");
  EXPECT_NE(error_of(env).find("adds up to 4 tasks but the task count is 3"), std::string::npos) << error_of(env);

  env = step_env();
  env.set("SLURM_STEP_TASKS_PER_NODE", "3");
  EXPECT_NE(error_of(env).find("lists 1 nodes but the node list has 2"), std::string::npos) << error_of(env);

  env = step_env();
  env.set("SLURM_LOCALID", "1");
  EXPECT_NE(error_of(env).find("SLURM_LOCALID=1 is not below the 1 tasks"), std::string::npos) << error_of(env);
}

TEST(Launcher, TellsSrunFromHydra) {
  EXPECT_EQ(detect_launcher(Environment()), Launcher::kSingleton);
  EXPECT_EQ(detect_launcher(step_env()), Launcher::kSrun);
  auto hydra = step_env();  // Hydra's proxies run in a step of their own
  hydra.set("MPI_LOCALNRANKS", "2");
  EXPECT_EQ(detect_launcher(hydra), Launcher::kMpiexec);
}

}  // namespace
}  // namespace hpctrain::cluster
