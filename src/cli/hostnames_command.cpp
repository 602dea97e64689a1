#include "cli/hostnames_command.h"

#include "cluster/hostlist.h"

namespace hpctrain::cli {

void run_hostnames(const std::string& expression, std::ostream& out) {
  for (const auto& host : cluster::expand_hostlist(expression)) out << host << '\n';
}

void run_hostlist(const std::string& expression, std::ostream& out) {
  out << cluster::compress_hostlist(cluster::expand_hostlist(expression)) << '\n';
}

}  // namespace hpctrain::cli
