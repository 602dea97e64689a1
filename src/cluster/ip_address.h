// An IPv4 or IPv6 address as plain bytes, with the subnet arithmetic interface
// selection needs.
#pragma once

#include <array>
#include <cstdint>
#include <string>

struct sockaddr;

namespace hpctrain::cluster {

struct IpAddress {
  int family = 0;                        // AF_INET or AF_INET6
  std::array<std::uint8_t, 16> bytes{};  // network order; IPv4 uses the first 4

  static IpAddress from_sockaddr(const sockaddr* sa);  // throws on other families
  static IpAddress parse(const std::string& text);     // throws on malformed text

  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] bool is_loopback() const;
  [[nodiscard]] std::string to_string() const;
  // True when this address and `other` agree on the first `prefix_len` bits.
  [[nodiscard]] bool same_subnet(const IpAddress& other, int prefix_len) const;
  bool operator==(const IpAddress& other) const = default;
};

}  // namespace hpctrain::cluster
