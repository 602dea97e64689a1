// The edge of both programs, hpctrain and jobgen: a command line parsed by
// CLI11 whose failures are one error line, and the one place exceptions are
// caught, each turned into "PROGRAM: error: message" and exit status 1.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "support/text.h"

namespace hpctrain::apps {

// A bad command line is one error line, like every other refusal (--help
// still prints help); a missing subcommand is answered with the ones there
// are. The program's name heads every usage line.
inline void one_line_failures(CLI::App& app, const std::string& program) {
  app.name(program);
  app.failure_message([program](const CLI::App* failed, const CLI::Error& e) {
    std::string message = e.what();
    if (failed != nullptr && message == "A subcommand is required") {
      // The deepest subcommand given is the one that wants another.
      const CLI::App* at = failed;
      std::string path = program;
      for (auto given = at->get_subcommands(); !given.empty(); given = at->get_subcommands()) {
        at = given.front();
        path += " " + at->get_name();
      }
      std::vector<std::string> names;
      for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; })) {
        names.push_back(sub->get_name());
      }
      message = fmt::format("{} needs a subcommand: {} (`{} --help` says what each does)", path, fmt::join(names, ", "),
                            path);
    }
    return program + ": error: " + message + "\n";
  });
}

// Parses `args` (without the program name); an exit status when the program
// is done (help shown, or a bad command line), nothing when it should run.
inline std::optional<int> parse(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes them reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return std::nullopt;
}

// Runs `command`, returning its status, or 1 with the exception's message
// (as `describe` words it) on stderr after whatever stdout already holds.
// Messages quote files from elsewhere (a checkpoint's dataset names, a run
// record): control characters are escaped, so it stays one line that no
// terminal acts on.
inline int at_the_edge(
    const std::string& program, const std::function<int()>& command,
    const std::function<std::string(const std::exception&)>& describe = [](const std::exception& e) {
      return std::string(e.what());
    }) {
  try {
    return command();
  } catch (const std::exception& e) {
    (void)std::fflush(stdout);
    fmt::print(stderr, "{}: error: {}\n", program, support::printable(describe(e)));
    return 1;
  }
}

}  // namespace hpctrain::apps
