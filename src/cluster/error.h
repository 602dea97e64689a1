// Errors raised by the cluster layer: bad SLURM variables, hostlists, name resolution.
#pragma once

#include <stdexcept>

namespace hpctrain::cluster {

class ClusterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hpctrain::cluster
