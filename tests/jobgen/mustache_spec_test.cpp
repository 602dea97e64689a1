// Runs every case of the official Mustache specification's JSON test files
// (given as arguments) through jobgen's renderer with HTML escaping, and lists
// each case whose output differs. Exit 77 (skipped) when the files are absent.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "jobgen/mustache.h"

int main(int argc, char** argv) {
  int failed = 0;
  int total = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::filesystem::exists(argv[i])) {
      std::cout << "SKIP: " << argv[i] << " is absent (the spec's data lives in ../shared/mustache-spec)\n";
      return 77;
    }
    const auto spec = nlohmann::json::parse(std::ifstream(argv[i]));
    for (const auto& test : spec.at("tests")) {
      ++total;
      hpctrain::jobgen::Partials partials;
      if (test.contains("partials")) {
        for (const auto& [name, text] : test["partials"].items()) partials[name] = text.get<std::string>();
      }
      std::string got;
      try {
        got = hpctrain::jobgen::render_mustache(test.at("template"), test.at("data"),
                                                hpctrain::jobgen::partials_from(partials),
                                                hpctrain::jobgen::escape_html, "case");
      } catch (const std::exception& e) {
        got = std::string("error: ") + e.what();
      }
      const std::string expected = test.at("expected");
      if (got != expected) {
        ++failed;
        std::cout << "FAIL " << std::filesystem::path(argv[i]).filename().string() << ": " << test.at("name")
                  << "\n  expected: " << nlohmann::json(expected) << "\n  got:      " << nlohmann::json(got) << "\n";
      }
    }
  }
  std::cout << total - failed << " of " << total << " specification cases pass\n";
  return failed == 0 && total > 0 ? 0 : 1;
}
