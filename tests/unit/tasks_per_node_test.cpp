#include "cluster/tasks_per_node.h"

#include <gtest/gtest.h>

#include "cluster/error.h"

namespace hpctrain::cluster {
namespace {

TEST(TasksPerNode, ExpandsRepeats) {
  EXPECT_EQ(parse_tasks_per_node("2(x3),1", "V"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(parse_tasks_per_node("4", "V"), (std::vector<int>{4}));
  EXPECT_EQ(parse_tasks_per_node("1,2,3", "V"), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(parse_tasks_per_node("8(x2)", "V"), (std::vector<int>{8, 8}));
}

TEST(TasksPerNode, RejectsMalformedValuesNamingTheVariable) {
  for (const char* bad : {"", "2(x)", "2(3)", "x", "2(x3", "2,,1", "-1", "2(x0)"}) {
    try {
      parse_tasks_per_node(bad, "SLURM_TASKS_PER_NODE");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const ClusterError& e) {
      EXPECT_NE(std::string(e.what()).find("SLURM_TASKS_PER_NODE"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace hpctrain::cluster
