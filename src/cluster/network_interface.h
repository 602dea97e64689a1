// Choosing the network interface that carries traffic to the head node (the
// value hpctrain gives NCCL_SOCKET_IFNAME). Each rank decides for its own node,
// because interface names differ between nodes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cluster/ip_address.h"

namespace hpctrain::cluster {

struct InterfaceAddress {
  std::string name;  // e.g. "eth0"
  IpAddress address;
  int prefix_len = 0;  // netmask length
  bool loopback = false;
};

struct InterfaceChoice {
  std::string name;    // one interface, or the user's NCCL_SOCKET_IFNAME verbatim
  std::string reason;  // one line, for logs and `hpctrain doctor`
  bool user_set = false;
  std::optional<InterfaceAddress> address;  // the chosen interface's address, unless user-set
};

// Every configured IPv4/IPv6 address of every interface that is up (getifaddrs).
std::vector<InterfaceAddress> list_interfaces();

// The local address the kernel would send from to reach `destination` (a UDP
// connect sends no packet). Throws ClusterError when there is no route.
IpAddress route_source(const IpAddress& destination);

// NCCL_SOCKET_IFNAME semantics: comma-separated name prefixes, "^" to exclude,
// "=" for exact names. True when `ifname` is selected by `spec`.
bool nccl_ifname_selects(const std::string& spec, const std::string& ifname);

// What hpctrain sets NCCL_SOCKET_IFNAME to for its own choice: "=eth1", NCCL's
// exact-name form, because a bare "eth1" is a prefix that also selects eth10
// and eth1.100. A user's own setting is passed on as written.
std::string nccl_socket_ifname(const InterfaceChoice& choice);

// The decision itself, free of system calls so it can be tested:
//  - a user-set NCCL_SOCKET_IFNAME wins, but must match an interface;
//  - a loopback head (single host) uses the loopback interface;
//  - otherwise the interface that owns `source`, the route's local address;
//  - when that is loopback (we are the head node: the kernel routes our own
//    address through lo), the non-loopback interface whose subnet holds the head.
InterfaceChoice choose_interface(const IpAddress& head, const IpAddress& source,
                                 const std::vector<InterfaceAddress>& interfaces,
                                 const std::optional<std::string>& user_ifname);

}  // namespace hpctrain::cluster
