// A snapshot of process environment variables, so SLURM and NCCL settings can be
// parsed from a real environment or from a test's hand-written one.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace hpctrain::cluster {

class Environment {
 public:
  Environment() = default;
  explicit Environment(std::map<std::string, std::string> vars) : vars_(std::move(vars)) {}

  static Environment current();

  [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
  [[nodiscard]] bool has(const std::string& name) const { return vars_.count(name) != 0; }
  void set(const std::string& name, std::string value) { vars_[name] = std::move(value); }

 private:
  std::map<std::string, std::string> vars_;
};

}  // namespace hpctrain::cluster
