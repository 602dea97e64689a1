// Configuration errors. Every message starts with where the bad value came from:
// "exp.toml:12:5", "--set data.vocab_size=x", or the file alone.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hpctrain::config {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The candidate closest to `word` by edit distance, or "" when none is close
// enough to be a plausible typo.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace hpctrain::config
