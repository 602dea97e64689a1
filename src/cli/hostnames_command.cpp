#include "cli/hostnames_command.h"

#include "cluster/hostlist.h"

namespace hpctrain::cli {

void run_hostnames(const std::string& expression, std::ostream& out) {
  for (const auto& host : cluster::expand_hostlist(expression)) out << host << '\n';
}

}  // namespace hpctrain::cli
