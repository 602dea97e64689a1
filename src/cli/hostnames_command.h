// `hpctrain hostnames EXPR`: one host per line, as `scontrol show hostnames`;
// `hpctrain hostlist EXPR`: the ranged form, as `scontrol show hostlist`.
#pragma once

#include <ostream>
#include <string>

namespace hpctrain::cli {

void run_hostnames(const std::string& expression, std::ostream& out);
void run_hostlist(const std::string& expression, std::ostream& out);

}  // namespace hpctrain::cli
