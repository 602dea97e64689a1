#include "cluster/network_interface.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <system_error>

#include "cluster/error.h"

namespace hpctrain::cluster {
namespace {

int prefix_length(const IpAddress& mask) {
  int bits = 0;
  for (std::size_t i = 0; i < mask.size(); ++i) bits += __builtin_popcount(mask.bytes[i]);
  return bits;
}

std::string interface_names(const std::vector<InterfaceAddress>& interfaces) {
  std::string names;
  for (const auto& i : interfaces) {
    if (names.find(i.name) != std::string::npos) continue;
    if (!names.empty()) names += ", ";
    names += i.name;
  }
  return names.empty() ? "none" : names;
}

}  // namespace

std::vector<InterfaceAddress> list_interfaces() {
  ifaddrs* raw = nullptr;
  if (getifaddrs(&raw) != 0)
    throw ClusterError(fmt::format("getifaddrs failed: {}", std::error_code(errno, std::system_category()).message()));
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> list(raw, &freeifaddrs);
  std::vector<InterfaceAddress> out;
  for (const ifaddrs* ifa = list.get(); ifa != nullptr; ifa = ifa->ifa_next) {
    if (ifa->ifa_addr == nullptr || (ifa->ifa_flags & IFF_UP) == 0) continue;
    const int family = ifa->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    InterfaceAddress entry;
    entry.name = ifa->ifa_name;
    entry.address = IpAddress::from_sockaddr(ifa->ifa_addr);
    entry.prefix_len = ifa->ifa_netmask != nullptr ? prefix_length(IpAddress::from_sockaddr(ifa->ifa_netmask))
                                                   : static_cast<int>(entry.address.size()) * 8;
    entry.loopback = (ifa->ifa_flags & IFF_LOOPBACK) != 0;
    out.push_back(std::move(entry));
  }
  return out;
}

IpAddress route_source(const IpAddress& destination) {
  const int fd = socket(destination.family, SOCK_DGRAM, 0);
  if (fd < 0)
    throw ClusterError(fmt::format("socket() failed: {}", std::error_code(errno, std::system_category()).message()));
  sockaddr_storage dst{};
  socklen_t dst_len = 0;
  if (destination.family == AF_INET) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(9);  // discard; connect() on UDP sends nothing
    std::memcpy(&in.sin_addr, destination.bytes.data(), 4);
    std::memcpy(&dst, &in, sizeof in);
    dst_len = sizeof in;
  } else {
    sockaddr_in6 in6{};
    in6.sin6_family = AF_INET6;
    in6.sin6_port = htons(9);
    std::memcpy(&in6.sin6_addr, destination.bytes.data(), 16);
    std::memcpy(&dst, &in6, sizeof in6);
    dst_len = sizeof in6;
  }
  sockaddr_storage local{};
  socklen_t local_len = sizeof local;
  const bool ok = connect(fd, reinterpret_cast<const sockaddr*>(&dst), dst_len) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) == 0;
  const int err = errno;
  close(fd);
  if (!ok) {
    throw ClusterError(fmt::format("head node address {} is unreachable from this node: {}", destination.to_string(),
                                   std::error_code(err, std::system_category()).message()));
  }
  return IpAddress::from_sockaddr(reinterpret_cast<const sockaddr*>(&local));
}

bool nccl_ifname_selects(const std::string& spec, const std::string& ifname) {
  std::string_view list = spec;
  const bool exclude = !list.empty() && list.front() == '^';
  if (exclude) list.remove_prefix(1);
  const bool exact = !list.empty() && list.front() == '=';
  if (exact) list.remove_prefix(1);
  bool listed = false;
  std::size_t start = 0;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    const std::string_view item = list.substr(start, comma - start);
    if (!item.empty() && (exact ? ifname == item : std::string_view(ifname).substr(0, item.size()) == item)) {
      listed = true;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return exclude ? !listed : listed;
}

std::string nccl_socket_ifname(const InterfaceChoice& choice) {
  return choice.user_set ? choice.name : "=" + choice.name;
}

InterfaceChoice choose_interface(const IpAddress& head, const IpAddress& source,
                                 const std::vector<InterfaceAddress>& interfaces,
                                 const std::optional<std::string>& user_ifname) {
  if (user_ifname) {
    for (const auto& i : interfaces) {
      if (nccl_ifname_selects(*user_ifname, i.name)) {
        return {*user_ifname,
                fmt::format("NCCL_SOCKET_IFNAME={} was set by the user (matches {})", *user_ifname, i.name), true,
                std::nullopt};
      }
    }
    throw ClusterError(fmt::format("NCCL_SOCKET_IFNAME='{}' matches no interface on this node (interfaces: {})",
                                   *user_ifname, interface_names(interfaces)));
  }

  if (head.is_loopback()) {
    for (const auto& i : interfaces) {
      if (i.loopback) {
        return {i.name, fmt::format("the head node resolves to loopback {}: a single-host run", head.to_string()),
                false, i};
      }
    }
  }

  const InterfaceAddress* owner = nullptr;
  for (const auto& i : interfaces) {
    if (i.address == source) owner = &i;
  }
  if (owner != nullptr && !owner->loopback && source == head) {
    return {owner->name,
            fmt::format("this is the head node: its own address {} belongs to {}", head.to_string(), owner->name),
            false, *owner};
  }
  if (owner != nullptr && !owner->loopback) {
    return {owner->name,
            fmt::format("the route to head {} leaves through {} (local address {})", head.to_string(), owner->name,
                        source.to_string()),
            false, *owner};
  }
  // Our own address routes through lo, so this is the head node: pick the real
  // interface that other nodes reach us on.
  for (const auto& i : interfaces) {
    if (!i.loopback && i.address.same_subnet(head, i.prefix_len)) {
      return {i.name,
              fmt::format("this is the head node: the route to its own address {} goes through lo, and {}'s subnet "
                          "{}/{} holds it",
                          head.to_string(), i.name, i.address.to_string(), i.prefix_len),
              false, i};
    }
  }
  throw ClusterError(
      fmt::format("no interface on this node reaches head node address {} (route source {}; "
                  "interfaces: {}); set NCCL_SOCKET_IFNAME",
                  head.to_string(), source.to_string(), interface_names(interfaces)));
}

}  // namespace hpctrain::cluster
