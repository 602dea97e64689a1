// Reads one [section] of a parsed TOML experiment: typed values with defaults
// and range checks, errors located at file:line:column (or at the --set that
// supplied the value), and a "did you mean" for unknown keys. Every value read
// is also written to `resolved`, which becomes the run's resolved config.
#pragma once

#include <toml++/toml.h>

#include "config/choices.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace hpctrain::config {

// The upper bound of an integer key that has none of its own.
inline constexpr std::int64_t kNoLimit = std::numeric_limits<std::int64_t>::max();

class SectionReader {
 public:
  // `file`: the experiment file, which origins() names when every key it is
  // given is a default. Readers that never call origins() (jobgen's
  // [slurm], [sweep] and cluster profiles) leave it empty.
  SectionReader(const toml::table& root, std::string section, toml::table& resolved, std::string file = {});

  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max);
  double number(const std::string& key, double fallback, double min, double max);
  bool boolean(const std::string& key, bool fallback);
  std::string string(const std::string& key, const std::string& fallback);
  std::string choice(const std::string& key, const std::string& fallback, const std::vector<std::string>& allowed);
  // One of E's names (config/choices.h), as its enum value.
  template <class E>
  E choice(const std::string& key, E fallback) {
    const std::string name = choice(key, std::string(name_of(fallback)), names<E>());
    for (const auto& c : ChoiceTable<E>::entries) {
      if (c.name == name) return c.value;
    }
    return fallback;  // unreachable: choice() accepted only these names
  }
  // An array of E's names.
  template <class E>
  std::vector<E> choices(const std::string& key, const std::vector<E>& fallback, const std::vector<E>& allowed) {
    std::vector<std::string> names_in;
    names_in.reserve(fallback.size());
    for (const E e : fallback) names_in.emplace_back(name_of(e));
    std::vector<std::string> allowed_names;
    allowed_names.reserve(allowed.size());
    for (const E e : allowed) allowed_names.emplace_back(name_of(e));
    std::vector<E> out;
    for (const auto& name : strings_of(key, names_in, allowed_names)) {
      for (const auto& c : ChoiceTable<E>::entries) {
        if (c.name == name) out.push_back(c.value);
      }
    }
    return out;
  }
  std::vector<std::string> strings(const std::string& key, const std::vector<std::string>& fallback);
  // A key older experiments (and the configs stored in older checkpoints)
  // may hold but nothing reads any more: accepted whatever its value, left
  // out of the resolved config; true when it was there.
  bool retired(const std::string& key);

  // Throws on any key of the section that no accessor asked for.
  void finish() const;

  // Where a check across KEYS ({section, key}, of any section) finds its
  // values: their file:line:column or --set, or the experiment file when
  // every one is a default.
  [[nodiscard]] std::string origins(std::initializer_list<std::pair<const char*, const char*>> keys) const;

 private:
  template <class E>
  static std::vector<std::string> names() {
    std::vector<std::string> out;
    out.reserve(std::size(ChoiceTable<E>::entries));
    for (const auto& c : ChoiceTable<E>::entries) out.emplace_back(c.name);
    return out;
  }
  // strings(), each one of `allowed` (an error names the element otherwise).
  std::vector<std::string> strings_of(const std::string& key, const std::vector<std::string>& fallback,
                                      const std::vector<std::string>& allowed);
  [[noreturn]] void fail(const toml::node& node, const std::string& key, const std::string& what) const;
  const toml::node* find(const std::string& key);

  const toml::table* root_;
  std::string file_;
  const toml::table* table_ = nullptr;
  std::string section_;
  std::set<std::string> known_;
  toml::table* resolved_;
};

// "exp.toml:3:7", or "--set data.x=1" for a value that came from the command line.
std::string location(const toml::source_region& region);

}  // namespace hpctrain::config
