// Finding the head node's address: the host rank 0 runs on, resolved with
// getaddrinfo, preferring a routable address over loopback.
#pragma once

#include <string>

#include "cluster/ip_address.h"

namespace hpctrain::cluster {

struct HeadNode {
  std::string host;    // the name, e.g. "node1"
  std::string source;  // where the name came from, e.g. "SLURM_STEP_NODELIST"
  IpAddress address;
};

// Throws ClusterError naming `host` and `source` when the name does not resolve.
HeadNode resolve_head_node(const std::string& host, const std::string& source);

}  // namespace hpctrain::cluster
