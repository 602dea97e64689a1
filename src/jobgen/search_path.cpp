#include "jobgen/search_path.h"

#include <fmt/format.h>

#include <system_error>

#include "config/config_error.h"
#include "jobgen/encoding.h"

namespace hpctrain::jobgen {
namespace {

namespace fs = std::filesystem;

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return !p.empty() && fs::is_directory(p, ec);
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// A place counts when either of its directories exists.
SearchPlace place(std::string what, const fs::path& templates, const fs::path& clusters) {
  return {std::move(what), is_dir(templates) ? templates : fs::path(), is_dir(clusters) ? clusters : fs::path()};
}

// The nearest directory at or above the experiment's that holds both
// templates/ and env/clusters/ (a checkout of this repository, or a copy of
// its layout beside a user's experiments).
fs::path repository_of(const fs::path& experiment) {
  std::error_code ec;
  fs::path dir = fs::absolute(experiment, ec).parent_path();
  for (int depth = 0; depth < 64 && !dir.empty(); ++depth) {
    if (is_dir(dir / "templates") && is_dir(dir / "env" / "clusters")) return dir;
    if (dir == dir.root_path()) break;
    dir = dir.parent_path();
  }
  return {};
}

fs::path find(const std::vector<SearchPlace>& places, fs::path SearchPlace::*dir, const std::string& name,
              const char* extension, const char* kind) {
  const std::string file = name + extension;
  for (const SearchPlace& p : places) {
    if (!(p.*dir).empty() && is_file(p.*dir / file)) return p.*dir / file;
  }
  std::string looked;
  for (const SearchPlace& p : places) {
    if (!(p.*dir).empty()) looked += fmt::format("{}{} ({})", looked.empty() ? "" : ", ", (p.*dir).string(), p.what);
  }
  throw config::ConfigError(
      fmt::format("{} '{}': no {} in {}", kind, printable(name), printable(file),
                  looked.empty() ? "any place jobgen searches (jobgen --version lists them)" : looked));
}

bool is_path(const std::string& name, const char* extension) {
  return name.find('/') != std::string::npos || name.ends_with(extension);
}

}  // namespace

JobgenPaths::JobgenPaths(std::filesystem::path templates, std::filesystem::path clusters)
    : places{{"given", std::move(templates), std::move(clusters)}} {}

std::filesystem::path JobgenPaths::template_file(const std::string& name_or_path) const {
  if (is_path(name_or_path, ".mustache")) return name_or_path;
  return find(places, &SearchPlace::templates, name_or_path, ".mustache", "template");
}

std::filesystem::path JobgenPaths::cluster_file(const std::string& name_or_path,
                                                const std::filesystem::path& beside) const {
  if (is_path(name_or_path, ".toml")) return name_or_path;
  if (!beside.empty() && is_file(beside / (name_or_path + ".toml"))) return beside / (name_or_path + ".toml");
  return find(places, &SearchPlace::clusters, name_or_path, ".toml", "cluster profile");
}

std::string JobgenPaths::describe() const {
  std::string out;
  for (std::size_t i = 0; i < places.size(); ++i) {
    const SearchPlace& p = places[i];
    if (p.templates.empty() && p.clusters.empty()) {
      out += fmt::format("  {}. {}: nothing there\n", i + 1, p.what);
      continue;
    }
    const auto dir = [](const fs::path& d) { return d.empty() ? std::string("(none)") : d.string(); };
    out += fmt::format("  {}. {}\n       templates: {}\n       profiles:  {}\n", i + 1, p.what, dir(p.templates),
                       dir(p.clusters));
  }
  out += fmt::format("a profile that names no executable runs {}", default_executable);
  return out;
}

JobgenPaths find_jobgen_paths(const SearchInputs& in) {
  JobgenPaths paths;
  if (in.jobgen_home != nullptr && *in.jobgen_home != '\0') {
    const fs::path home = in.jobgen_home;
    if (!is_dir(home / "clusters") && is_dir(home / "env" / "clusters")) {
      throw config::ConfigError(fmt::format(
          "JOBGEN_HOME={}: profiles belong in clusters/, not env/clusters/: $JOBGEN_HOME has the layout of "
          "PREFIX/share/hpctrain (templates/, clusters/); a checkout is found without it, next to the experiment",
          printable(home.string())));
    }
    paths.places.push_back(place("$JOBGEN_HOME", home / "templates", home / "clusters"));
    if (paths.places.back().templates.empty() && paths.places.back().clusters.empty()) {
      throw config::ConfigError(
          fmt::format("JOBGEN_HOME={}: holds neither templates/ nor clusters/ (the layout of PREFIX/share/hpctrain)",
                      printable(home.string())));
    }
  } else {
    paths.places.push_back({"$JOBGEN_HOME (unset)", {}, {}});
  }
  const fs::path repo = in.experiment.empty() ? fs::path() : repository_of(in.experiment);
  if (repo.empty()) {
    paths.places.push_back({in.experiment.empty() ? "the experiment's repository (templates/ and env/clusters/ "
                                                    "above the experiment file; no experiment given)"
                                                  : "the experiment's repository (none above it)",
                            {},
                            {}});
  } else {
    paths.places.push_back(
        place("the experiment's repository " + repo.string(), repo / "templates", repo / "env" / "clusters"));
  }
  if (!in.self_exe.empty()) {
    const fs::path bin = in.self_exe.parent_path();
    const fs::path share = bin.parent_path() / "share" / "hpctrain";
    paths.places.push_back(place("the installed tree " + share.string(), share / "templates", share / "clusters"));
    if (is_file(bin / "hpctrain")) paths.default_executable = (bin / "hpctrain").string();
  }
  if (!in.build_source_dir.empty()) {
    paths.places.push_back(place("the source tree jobgen was built from " + in.build_source_dir.string(),
                                 in.build_source_dir / "templates", in.build_source_dir / "env" / "clusters"));
  }
  return paths;
}

}  // namespace hpctrain::jobgen
