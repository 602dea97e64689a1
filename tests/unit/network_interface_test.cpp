#include "cluster/network_interface.h"

#include <gtest/gtest.h>

#include "cluster/error.h"

namespace hpctrain::cluster {
namespace {

InterfaceAddress iface(const std::string& name, const std::string& addr, int prefix) {
  return {name, IpAddress::parse(addr), prefix, name == "lo"};
}

std::vector<InterfaceAddress> node_interfaces() {
  return {iface("lo", "127.0.0.1", 8), iface("eth0", "10.77.0.2", 24), iface("ib0", "192.168.5.2", 16)};
}

TEST(InterfaceChoice, FollowsTheRouteToTheHead) {
  const auto c =
      choose_interface(IpAddress::parse("192.168.5.1"), IpAddress::parse("192.168.5.2"), node_interfaces(), {});
  EXPECT_EQ(c.name, "ib0");
  EXPECT_FALSE(c.user_set);
  EXPECT_NE(c.reason.find("leaves through ib0"), std::string::npos) << c.reason;
}

TEST(InterfaceChoice, OnTheHeadNodeSkipsLoopbackForTheSubnetHoldingTheHead) {
  // The kernel routes a node's own address through lo.
  const auto c = choose_interface(IpAddress::parse("10.77.0.2"), IpAddress::parse("10.77.0.2"),
                                  {iface("lo", "127.0.0.1", 8), iface("eth0", "10.77.0.2", 24)}, {});
  EXPECT_EQ(c.name, "eth0");
  EXPECT_NE(c.reason.find("this is the head node: its own address 10.77.0.2 belongs to eth0"), std::string::npos)
      << c.reason;
  ASSERT_TRUE(c.address.has_value());
  EXPECT_EQ(c.address->prefix_len, 24);
  const auto via_lo =
      choose_interface(IpAddress::parse("10.77.0.2"), IpAddress::parse("127.0.0.1"), node_interfaces(), {});
  EXPECT_EQ(via_lo.name, "eth0");
  EXPECT_NE(via_lo.reason.find("this is the head node"), std::string::npos) << via_lo.reason;
}

TEST(InterfaceChoice, LoopbackHeadMeansASingleHost) {
  const auto c = choose_interface(IpAddress::parse("127.0.1.1"), IpAddress::parse("127.0.0.1"), node_interfaces(), {});
  EXPECT_EQ(c.name, "lo");
}

TEST(InterfaceChoice, UserSettingWinsButMustMatch) {
  const auto c =
      choose_interface(IpAddress::parse("10.77.0.1"), IpAddress::parse("10.77.0.2"), node_interfaces(), "ib");
  EXPECT_EQ(c.name, "ib");
  EXPECT_TRUE(c.user_set);
  try {
    choose_interface(IpAddress::parse("10.77.0.1"), IpAddress::parse("10.77.0.2"), node_interfaces(), "enp9s0");
    FAIL() << "no error";
  } catch (const ClusterError& e) {
    EXPECT_NE(std::string(e.what()).find("NCCL_SOCKET_IFNAME='enp9s0' matches no interface"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("lo, eth0, ib0"), std::string::npos) << e.what();
  }
}

TEST(InterfaceChoice, NoInterfaceReachesTheHead) {
  EXPECT_THROW(choose_interface(IpAddress::parse("172.16.0.9"), IpAddress::parse("127.0.0.1"), node_interfaces(), {}),
               ClusterError);
}

TEST(NcclIfname, OurChoiceIsAnExactNameAndTheUsersIsKeptAsWritten) {
  const auto chosen =
      choose_interface(IpAddress::parse("10.77.0.1"), IpAddress::parse("10.77.0.2"), node_interfaces(), {});
  EXPECT_EQ(nccl_socket_ifname(chosen), "=" + chosen.name);
  // A bare name is a prefix to NCCL: "eth1" would also select eth10.
  EXPECT_TRUE(nccl_ifname_selects("eth1", "eth10"));
  EXPECT_FALSE(nccl_ifname_selects(nccl_socket_ifname({"eth1", "", false, std::nullopt}), "eth10"));
  EXPECT_TRUE(nccl_ifname_selects(nccl_socket_ifname({"eth1", "", false, std::nullopt}), "eth1"));
  EXPECT_EQ(nccl_socket_ifname({"^docker,lo", "", true, std::nullopt}), "^docker,lo");
}

TEST(NcclIfname, PrefixExactAndExclude) {
  EXPECT_TRUE(nccl_ifname_selects("eth", "eth0"));
  EXPECT_TRUE(nccl_ifname_selects("ib,eth", "eth1"));
  EXPECT_FALSE(nccl_ifname_selects("=eth", "eth0"));
  EXPECT_TRUE(nccl_ifname_selects("=eth0", "eth0"));
  EXPECT_FALSE(nccl_ifname_selects("^eth", "eth0"));
  EXPECT_TRUE(nccl_ifname_selects("^eth", "ib0"));
  EXPECT_FALSE(nccl_ifname_selects("^=ib0", "ib0"));
}

TEST(IpAddress, SubnetsAndLoopback) {
  EXPECT_TRUE(IpAddress::parse("10.77.0.9").same_subnet(IpAddress::parse("10.77.0.1"), 24));
  EXPECT_FALSE(IpAddress::parse("10.77.1.9").same_subnet(IpAddress::parse("10.77.0.1"), 24));
  EXPECT_TRUE(IpAddress::parse("10.77.1.9").same_subnet(IpAddress::parse("10.77.0.1"), 20));
  EXPECT_TRUE(IpAddress::parse("127.0.1.1").is_loopback());
  EXPECT_TRUE(IpAddress::parse("::1").is_loopback());
  EXPECT_FALSE(IpAddress::parse("fe80::1").same_subnet(IpAddress::parse("10.0.0.1"), 8));
  EXPECT_THROW(IpAddress::parse("10.0.0"), ClusterError);
}

}  // namespace
}  // namespace hpctrain::cluster
