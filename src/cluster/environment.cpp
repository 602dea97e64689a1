#include "cluster/environment.h"

#include <unistd.h>  // environ (glibc declares it with _GNU_SOURCE, which g++ and clang++ define)

#include <cstring>

namespace hpctrain::cluster {

Environment Environment::current() {
  std::map<std::string, std::string> vars;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const char* eq = std::strchr(*entry, '=');
    if (eq == nullptr) continue;
    vars.emplace(std::string(*entry, static_cast<std::size_t>(eq - *entry)), std::string(eq + 1));
  }
  return Environment(std::move(vars));
}

std::optional<std::string> Environment::get(const std::string& name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

}  // namespace hpctrain::cluster
