// Hostlist expansion and compression against the behaviour of Slurm 22.05.
// (tests/cluster/hostlist-vs-scontrol.sh checks the same against the real scontrol.)
#include "cluster/hostlist.h"

#include <gtest/gtest.h>

#include "cluster/error.h"

namespace hpctrain::cluster {
namespace {

using Hosts = std::vector<std::string>;

TEST(Hostlist, ExpandsRangesListsAndPlainNames) {
  EXPECT_EQ(expand_hostlist("node[01-03,7],gpu-a[1-2]"),
            (Hosts{"node01", "node02", "node03", "node7", "gpu-a1", "gpu-a2"}));
  EXPECT_EQ(expand_hostlist("n[1-2] m[3-4]"), (Hosts{"n1", "n2", "m3", "m4"}));
  EXPECT_EQ(expand_hostlist("login"), (Hosts{"login"}));
  EXPECT_EQ(expand_hostlist("a,b,,c"), (Hosts{"a", "b", "c"}));
  EXPECT_EQ(expand_hostlist(""), Hosts{});
}

TEST(Hostlist, KeepsZeroPaddingOfTheLowBound) {
  EXPECT_EQ(expand_hostlist("n[08-10]"), (Hosts{"n08", "n09", "n10"}));
  EXPECT_EQ(expand_hostlist("n[8-10]"), (Hosts{"n8", "n9", "n10"}));
  EXPECT_EQ(expand_hostlist("n[001-002]"), (Hosts{"n001", "n002"}));
  EXPECT_EQ(expand_hostlist("n[01-2]"), (Hosts{"n01", "n02"}));
  EXPECT_EQ(expand_hostlist("n[1-]"), (Hosts{"n1"}));
}

TEST(Hostlist, SeveralBracketGroupsFormAProduct) {
  EXPECT_EQ(expand_hostlist("rack[1-2]n[1-3]"),
            (Hosts{"rack1n1", "rack1n2", "rack1n3", "rack2n1", "rack2n2", "rack2n3"}));
  EXPECT_EQ(expand_hostlist("a[1-2]-b[3-4]"), (Hosts{"a1-b3", "a1-b4", "a2-b3", "a2-b4"}));
  EXPECT_EQ(expand_hostlist("n[1-2][3]"), (Hosts{"n13", "n23"}));
}

// What Slurm 24.11's scontrol prints for them (22.05 refused them).
TEST(Hostlist, TextAfterTheLastGroupEndsEveryName) {
  EXPECT_EQ(expand_hostlist("tux[1-2]-ib"), (Hosts{"tux1-ib", "tux2-ib"}));
  EXPECT_EQ(expand_hostlist("node-[0-1].cluster,m"), (Hosts{"node-0.cluster", "node-1.cluster", "m"}));
  EXPECT_EQ(expand_hostlist("a[1-2]b[3-4]c"), (Hosts{"a1b3c", "a1b4c", "a2b3c", "a2b4c"}));
  EXPECT_EQ(expand_hostlist("x[001-002]0"), (Hosts{"x0010", "x0020"}));
}

TEST(Hostlist, KeepsDuplicatesAndOrder) {
  EXPECT_EQ(expand_hostlist("b,a,b"), (Hosts{"b", "a", "b"}));
  EXPECT_EQ(expand_hostlist("n[3,1,3]"), (Hosts{"n3", "n1", "n3"}));
}

// And where Slurm 24.11 prints a name with a bracket in it ("n[1-2]]" gives
// "n1]"), hpctrain refuses: no host is called that.
TEST(Hostlist, RejectsWhatSlurmRejects) {
  for (const char* bad : {"n[1-2]]", "n[1-2]x]", "n[3-1]", "n[1-", "n]", "n[[1]]", "n[a-b]", "n[1,,2]", "n[]", "n[-1]",
                          "n[1--2]", "n[ 1-2]", "n[+1]", "n[0x1]", "n[1-70000]"}) {
    EXPECT_THROW(expand_hostlist(bad), ClusterError) << bad;
  }
}

TEST(Hostlist, ErrorsQuoteTheExpression) {
  try {
    expand_hostlist("tux[2-1]-ib");
    FAIL() << "no error";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("'tux[2-1]-ib'"), std::string::npos) << e.what();
  }
}

TEST(Hostlist, CompressesConsecutiveNumbersPerPrefix) {
  EXPECT_EQ(compress_hostlist({"n1", "n2", "n3", "n5"}), "n[1-3,5]");
  EXPECT_EQ(compress_hostlist({"n08", "n09", "n10"}), "n[08-10]");
  EXPECT_EQ(compress_hostlist({"n9", "n10"}), "n[9-10]");
  EXPECT_EQ(compress_hostlist({"n01", "n2"}), "n[01,2]");
  EXPECT_EQ(compress_hostlist({"login", "n1", "n2", "gpu1"}), "login,n[1-2],gpu1");
  EXPECT_EQ(compress_hostlist({"n1"}), "n1");
  EXPECT_EQ(compress_hostlist({}), "");
}

TEST(Hostlist, CompressionRoundTrips) {
  for (const char* expr : {"node[01-03,7],gpu-a[1-2]", "n[08-10]", "a,b,c", "rack1n[1-3],rack2n[1-3]"}) {
    const auto hosts = expand_hostlist(expr);
    EXPECT_EQ(expand_hostlist(compress_hostlist(hosts)), hosts) << expr;
  }
}

TEST(Hostlist, RangesReachTheLastUnsignedLongWithoutLooping) {
  EXPECT_EQ(expand_hostlist("n[18446744073709551615]"), (Hosts{"n18446744073709551615"}));
  EXPECT_EQ(expand_hostlist("n[18446744073709551614-18446744073709551615]"),
            (Hosts{"n18446744073709551614", "n18446744073709551615"}));
  EXPECT_THROW((void)expand_hostlist("n[0-18446744073709551615]"), ClusterError);
}

TEST(Hostlist, OutputIsBoundedInBytesNotOnlyInHosts) {
  const std::string long_prefix(4000, 'x');
  EXPECT_THROW((void)expand_hostlist(long_prefix + "[0-65535]"), ClusterError);  // 256 MiB of names
  EXPECT_THROW((void)expand_hostlist("n[" + std::string(100000, '0') + "1-2000]"), ClusterError);
  std::string chained = "a";
  for (int i = 0; i < 30; ++i) chained += "[1-2]";
  EXPECT_THROW((void)expand_hostlist(chained), ClusterError);  // 2^30 hosts
  EXPECT_THROW((void)expand_hostlist("a[1-60000][1-60000]"), ClusterError);
  std::string units = "a";
  for (int i = 0; i < 2000; ++i) units += "[1]";
  EXPECT_EQ(expand_hostlist(units).size(), 1U);
}

TEST(Hostlist, SeveralGroupsMultiplyInSlurmsOrder) {
  // scontrol: the last group varies fastest, then the first, the second, ...
  EXPECT_EQ(expand_hostlist("a[1-2]b[1-2]c[1-2]"),
            (Hosts{"a1b1c1", "a1b1c2", "a2b1c1", "a2b1c2", "a1b2c1", "a1b2c2", "a2b2c1", "a2b2c2"}));
}

}  // namespace
}  // namespace hpctrain::cluster
