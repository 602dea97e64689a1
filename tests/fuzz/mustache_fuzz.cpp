// Fuzz harness: the Mustache renderer (jobgen/mustache) with its data, as
// `jobgen render T --data D --partial NAME=FILE` runs it. The input is the
// template, then after NUL bytes the JSON data and any partials, each
// NAME=TEXT. Any input must render or end in a RenderError, quickly and within
// bounded memory. The data goes through jobgen's own loader (JSON; TOML when
// it starts with '#'), with its bounds.
//
// Besides libFuzzer's byte mutations, one time in eight a whole token of the
// template or data syntax goes in thousands of times (token_mutator.h): the
// renderer's worst inputs are one tag or one nesting step repeated, which
// byte mutations never grow (mustache_shapes_fuzz.cpp builds such shapes on
// purpose; this harness must reach them from ordinary templates).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobgen/data_file.h"
#include "jobgen/mustache.h"
#include "split_input.h"
#include "token_mutator.h"

namespace {

// Tags, and the steps that nest TOML keys and JSON values one level deeper.
constexpr std::array<std::string_view, 11> kTokens = {"{{!c}}", "{{#a}}", "{{/a}}", "{{^a}}",  "{{a}}", "{{>a}}",
                                                      "{{.}}",  ".a",     "[",      "{\"a\":", "\n"};

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  return hpctrain::fuzz::insert_repeated_token(data, size, max_size, seed, kTokens);
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> parts = hpctrain::fuzz::split_at_nul(data, size);
  hpctrain::jobgen::Partials partials;
  for (std::size_t i = 2; i < parts.size(); ++i) {
    const std::size_t eq = parts[i].find('=');
    if (eq != std::string::npos) partials[parts[i].substr(0, eq)] = parts[i].substr(eq + 1);
  }
  try {
    nlohmann::json context = nlohmann::json::object();
    if (parts.size() > 1 && !parts[1].empty()) {
      context = hpctrain::jobgen::parse_data(parts[1], "data", parts[1][0] == '#');
    }
    (void)hpctrain::jobgen::render_mustache(parts[0], context, hpctrain::jobgen::partials_from(partials),
                                            hpctrain::jobgen::escape_html, "fuzz");
  } catch (const hpctrain::jobgen::RenderError&) {
    // refused, naming the template's line:column or the data's place
  }
  return 0;
}
