// Fuzz harness: SLURM hostlist expressions (cluster/hostlist), as they arrive
// in SLURM_JOB_NODELIST or `hpctrain hostnames`. Any input must end in a host
// list or a ClusterError, quickly and within bounded memory; a list that
// expands must survive compress -> expand unchanged. Its mutations include
// repeating a region many times (repeat_mutator.h): long prefixes, many
// bracket groups, long zero padding.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cluster/error.h"
#include "cluster/hostlist.h"
#include "repeat_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view expression(reinterpret_cast<const char*>(data), size);
  try {
    const auto hosts = hpctrain::cluster::expand_hostlist(expression);
    if (hosts.size() <= 4096) {
      const auto again = hpctrain::cluster::expand_hostlist(hpctrain::cluster::compress_hostlist(hosts));
      if (again != hosts) std::abort();  // compress_hostlist lost or changed a host
    }
  } catch (const hpctrain::cluster::ClusterError&) {
    // refused, with a reason: the expected way out for a bad expression
  }
  return 0;
}
