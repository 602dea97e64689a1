// `hpctrain hostnames EXPR`: one host per line, as `scontrol show hostnames`.
#pragma once

#include <ostream>
#include <string>

namespace hpctrain::cli {

void run_hostnames(const std::string& expression, std::ostream& out);

}  // namespace hpctrain::cli
