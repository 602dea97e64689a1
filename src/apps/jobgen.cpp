// jobgen: renders batch scripts from experiments (coming), and any Mustache
// template with `jobgen render`. Parses the command line and turns an escaping
// exception into one error line and a non-zero exit.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "jobgen/data_file.h"
#include "jobgen/mustache.h"

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw hpctrain::jobgen::RenderError(path + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"jobgen: SLURM batch scripts from hpctrain experiments"};
  app.require_subcommand(1);
  std::string template_file;
  std::string data_file;
  std::string escape = "none";
  std::vector<std::string> partial_files;
  auto* render = app.add_subcommand("render", "Render a Mustache template with data from a TOML or JSON file");
  render->add_option("TEMPLATE", template_file, "Mustache template file")->required();
  render->add_option("--data", data_file, "TOML or JSON data")->required();
  render->add_option("--escape", escape, "what {{x}} does to values: none, or html (the specification's)")
      ->check(CLI::IsMember({"none", "html"}));
  render->add_option("--partial", partial_files, "NAME=FILE: a partial (repeatable)");
  CLI11_PARSE(app, argc, argv);
  try {
    hpctrain::jobgen::Partials partials;
    for (const auto& item : partial_files) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) throw hpctrain::jobgen::RenderError("--partial " + item + ": expected NAME=FILE");
      partials[item.substr(0, eq)] = read_text(item.substr(eq + 1));
    }
    const hpctrain::jobgen::Escape escaper =
        escape == "html" ? hpctrain::jobgen::Escape(hpctrain::jobgen::escape_html)
                         : hpctrain::jobgen::Escape([](const std::string& value) { return value; });
    std::cout << hpctrain::jobgen::render_mustache(
        read_text(template_file), hpctrain::jobgen::load_data_file(data_file), partials, escaper, template_file);
  } catch (const std::exception& e) {
    (void)std::fflush(stdout);
    fmt::print(stderr, "jobgen: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
