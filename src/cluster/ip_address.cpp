#include "cluster/ip_address.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

#include "cluster/error.h"

namespace hpctrain::cluster {

IpAddress IpAddress::from_sockaddr(const sockaddr* sa) {
  IpAddress ip;
  if (sa == nullptr) throw ClusterError("no socket address");
  ip.family = sa->sa_family;
  if (sa->sa_family == AF_INET) {
    sockaddr_in in{};
    std::memcpy(&in, sa, sizeof in);
    std::memcpy(ip.bytes.data(), &in.sin_addr, 4);
  } else if (sa->sa_family == AF_INET6) {
    sockaddr_in6 in6{};
    std::memcpy(&in6, sa, sizeof in6);
    std::memcpy(ip.bytes.data(), &in6.sin6_addr, 16);
  } else {
    throw ClusterError(fmt::format("unsupported address family {}", sa->sa_family));
  }
  return ip;
}

IpAddress IpAddress::parse(const std::string& text) {
  IpAddress ip;
  if (inet_pton(AF_INET, text.c_str(), ip.bytes.data()) == 1) {
    ip.family = AF_INET;
  } else if (inet_pton(AF_INET6, text.c_str(), ip.bytes.data()) == 1) {
    ip.family = AF_INET6;
  } else {
    throw ClusterError(fmt::format("'{}' is not an IP address", text));
  }
  return ip;
}

std::size_t IpAddress::size() const { return family == AF_INET ? 4 : 16; }

bool IpAddress::is_loopback() const {
  if (family == AF_INET) return bytes[0] == 127;
  static constexpr std::array<std::uint8_t, 16> kLoop6{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return bytes == kLoop6;
}

std::string IpAddress::to_string() const {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(family, bytes.data(), text, sizeof text);
  return text;
}

bool IpAddress::same_subnet(const IpAddress& other, int prefix_len) const {
  if (family != other.family || prefix_len < 0) return false;
  const int bits = static_cast<int>(size()) * 8;
  if (prefix_len > bits) prefix_len = bits;
  int i = 0;
  for (; prefix_len >= 8; prefix_len -= 8, ++i) {
    if (bytes[static_cast<std::size_t>(i)] != other.bytes[static_cast<std::size_t>(i)]) return false;
  }
  if (prefix_len == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xFFU << (8 - prefix_len));
  return (bytes[static_cast<std::size_t>(i)] & mask) == (other.bytes[static_cast<std::size_t>(i)] & mask);
}

}  // namespace hpctrain::cluster
