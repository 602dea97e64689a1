// Fuzz harness: the experiment loader (config/), as `hpctrain` and `jobgen`
// run it on a TOML file and its --set overrides. The input is the file's text,
// then each override after a NUL byte. Any input must load or end in a
// ConfigError naming where the problem is: its message starts with the file
// ("fuzz.toml:12:5", "fuzz.toml") or the override ("--set KEY=VALUE"); any
// other message (such as toml++'s "<input>:0:0") aborts, as a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
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
  } catch (const hpctrain::config::ConfigError& e) {
    const std::string_view what = e.what();
    if (!what.starts_with("fuzz.toml") && !what.starts_with("--set")) {
      (void)std::fprintf(stderr, "experiment_fuzz: an error that names neither the file nor the --set: %s\n", e.what());
      std::abort();
    }
  }
  return 0;
}
