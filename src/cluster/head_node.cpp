#include "cluster/head_node.h"

#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>

#include <memory>
#include <optional>

#include "cluster/error.h"

namespace hpctrain::cluster {

HeadNode resolve_head_node(const std::string& host, const std::string& source) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* raw = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &raw);
  if (rc != 0) {
    throw ClusterError(fmt::format("head node '{}' (from {}) does not resolve: {}", host, source, gai_strerror(rc)));
  }
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(raw, &freeaddrinfo);

  // Debian maps a host's own name to 127.0.1.1; other nodes see its real address,
  // so a routable answer wins over loopback, and IPv4 over IPv6.
  std::optional<IpAddress> best;
  auto rank = [](const IpAddress& ip) { return (ip.is_loopback() ? 2 : 0) + (ip.family == AF_INET ? 0 : 1); };
  for (const addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6) continue;
    const IpAddress ip = IpAddress::from_sockaddr(ai->ai_addr);
    if (!best || rank(ip) < rank(*best)) best = ip;
  }
  if (!best) throw ClusterError(fmt::format("head node '{}' (from {}) has no IP address", host, source));
  return HeadNode{host, source, *best};
}

}  // namespace hpctrain::cluster
