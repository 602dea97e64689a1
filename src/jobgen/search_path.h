// Where jobgen finds batch templates (templates/NAME.mustache) and cluster
// profiles (clusters/NAME.toml), so that one jobgen works from a source
// checkout, from `cmake --install` into any prefix and from the Debian
// package. The places, searched in this order for each file:
//   1. $JOBGEN_HOME: templates/ and clusters/, the installed layout;
//   2. the repository the experiment sits in: the nearest directory above the
//      experiment file holding templates/ and env/clusters/;
//   3. the installed tree beside this jobgen: PREFIX/share/hpctrain, where
//      PREFIX/bin holds the running executable (/proc/self/exe);
//   4. the source tree this jobgen was built from, when it still exists.
// A --template or --cluster value holding a '/' or ending in .mustache or
// .toml is a path and is used as given. A profile that names no executable
// gets the hpctrain installed beside this jobgen.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace hpctrain::jobgen {

struct SearchPlace {
  std::string what;                 // "$JOBGEN_HOME", "the installed tree", ...
  std::filesystem::path templates;  // empty: the place is not there
  std::filesystem::path clusters;
  // How far it is trusted: "named by you", or its owner and mode where jobgen
  // found it and checked that the user controls it.
  std::string trust;
  bool checked = false;  // found by jobgen: each file it serves is checked too
};

struct JobgenPaths {
  std::vector<SearchPlace> places;
  std::string default_executable = "hpctrain";  // for profiles that name none

  JobgenPaths() = default;
  // One place: the templates and profiles directories given.
  JobgenPaths(std::filesystem::path templates, std::filesystem::path clusters);

  // The first place holding the file; ConfigError listing every place otherwise.
  [[nodiscard]] std::filesystem::path template_file(const std::string& name_or_path) const;
  // `beside`: a directory looked in first (a profile's parent is found beside
  // the profile that inherits from it).
  [[nodiscard]] std::filesystem::path cluster_file(const std::string& name_or_path,
                                                   const std::filesystem::path& beside = {}) const;
  // The place a file found by template_file or cluster_file came from, and
  // how far it is trusted; "a path you named" for a path given as such.
  [[nodiscard]] std::string origin(const std::filesystem::path& file) const;
  // One line per place, in search order, saying whether it is there.
  [[nodiscard]] std::string describe() const;
};

// What the search needs from outside, gathered by the program's edge.
struct SearchInputs {
  std::filesystem::path experiment;        // empty when there is none
  const char* jobgen_home = nullptr;       // $JOBGEN_HOME, or null
  std::filesystem::path self_exe;          // /proc/self/exe's target
  std::filesystem::path build_source_dir;  // the source tree jobgen was built from
  std::filesystem::path templates_dir;     // --templates DIR, or empty
};

JobgenPaths find_jobgen_paths(const SearchInputs& in);

}  // namespace hpctrain::jobgen
