// Fuzz harness: the experiment loader (config/), as `hpctrain` and `jobgen`
// run it on a TOML file and its --set overrides. The input is the file's text,
// then each override after a NUL byte. Any input must load or end in a
// ConfigError naming where the problem is.
#include <cstdint>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "config/experiment.h"
#include "split_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts = hpctrain::fuzz::split_at_nul(data, size);
  const std::string text = parts.front();
  parts.erase(parts.begin());
  try {
    (void)hpctrain::config::load_experiment_text(text, "fuzz.toml", parts);
  } catch (const hpctrain::config::ConfigError&) {
    // refused, naming the file:line:column or the --set
  }
  return 0;
}
