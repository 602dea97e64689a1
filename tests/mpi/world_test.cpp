// Bootstrap under mpiexec on one host: ranks, local ranks, head node, interface.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "comm/consensus.h"
#include "comm/world.h"
#include "mpi_test_main.h"

namespace hpctrain::comm {
namespace {

const handles::MpiRuntime& runtime() { return testing::mpi_runtime(); }

TEST(World, BootstrapsUnderMpiexec) {
  const World world(runtime(), cluster::Environment::current(), WorldOptions{std::chrono::seconds(60)});
  EXPECT_EQ(world.launcher(), cluster::Launcher::kMpiexec);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT_EQ(world.size(), size);
  // One host: every rank is node-local, with distinct local ranks.
  EXPECT_EQ(world.local_size(), size);
  EXPECT_EQ(world.local_rank(), world.rank());
  EXPECT_EQ(world.hosts().size(), static_cast<std::size_t>(size));
  EXPECT_EQ(world.head().host, world.hosts().front());
  EXPECT_FALSE(world.interface().name.empty());
  // What NCCL will read: the chosen interface by its exact name.
  const char* ifname = std::getenv("NCCL_SOCKET_IFNAME");  // NOLINT(concurrency-mt-unsafe): no other thread reads it
  ASSERT_NE(ifname, nullptr);
  EXPECT_EQ(std::string(ifname), world.interface().user_set ? world.interface().name : "=" + world.interface().name);
}

TEST(World, EveryRankAgreesOnTheHeadAndItsAddress) {
  World world(runtime(), cluster::Environment::current(), WorldOptions{std::chrono::seconds(60)});
  const auto heads = allgather_strings(world.comm(), world.head().host + " " + world.head().address.to_string());
  EXPECT_EQ(std::set<std::string>(heads.begin(), heads.end()).size(), 1U) << heads.front();
}

TEST(World, AnErrorOnOneRankReachesEveryRank) {
  World world(runtime(), cluster::Environment::current(), WorldOptions{std::chrono::seconds(60)});
  const std::optional<std::string> error =
      world.rank() == world.size() - 1 ? std::optional<std::string>("disk on fire") : std::nullopt;
  try {
    agree_or_throw(world.comm(), error);
    FAIL() << "no error";
  } catch (const AgreedError& e) {
    EXPECT_EQ(std::string(e.what()), "rank " + std::to_string(world.size() - 1) + ": disk on fire");
  }
}

TEST(World, EveryFailingRankIsNamedGroupedByItsError) {
  World world(runtime(), cluster::Environment::current(), WorldOptions{std::chrono::seconds(60)});
  // Rank 1 fails its own way, every other rank the same way (as a node whose
  // GPUs are gone fails on all its ranks while one rank hits something else).
  const std::string error = world.rank() == 1 ? "injected" : "no visible GPU";
  const int n = world.size();
  std::vector<int> other_ranks{0};
  for (int r = 2; r < n; ++r) other_ranks.push_back(r);
  const std::string others = (n == 2 ? "rank " : "ranks ") + rank_ranges(other_ranks);
  try {
    agree_or_throw(world.comm(), error);
    FAIL() << "no error";
  } catch (const AgreedError& e) {
    EXPECT_EQ(std::string(e.what()), others + ": no visible GPU; rank 1: injected");
  }
}

TEST(World, RankRangesCompressRunsOfThree) {
  EXPECT_EQ(rank_ranges({3, 0, 1}), "0, 1, 3");
  EXPECT_EQ(rank_ranges({0, 2, 3, 4, 7}), "0, 2-4, 7");
  EXPECT_EQ(rank_ranges({}), "");
}

}  // namespace
}  // namespace hpctrain::comm
