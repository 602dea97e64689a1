#include "jobgen/search_path.h"

#include <fmt/format.h>

#include <system_error>

#include "config/config_error.h"
#include "jobgen/encoding.h"
#include "jobgen/user_controlled.h"

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

// A place the user named: it counts when either of its directories exists.
SearchPlace place(std::string what, const fs::path& templates, const fs::path& clusters) {
  return {std::move(what), is_dir(templates) ? templates : fs::path(), is_dir(clusters) ? clusters : fs::path(),
          "named by you", false};
}

// A place jobgen found by itself: `root` and every directory from it down to
// templates/ and the profiles' directory must be the user's, or jobgen stops.
// Where the user named a place of their own (--templates, $JOBGEN_HOME), one
// that is not theirs is left out of the search rather than refused.
SearchPlace checked_place(std::string what, const fs::path& root, const fs::path& templates, const fs::path& clusters,
                          bool user_named_a_place) {
  SearchPlace p = place(std::move(what), templates, clusters);
  if (p.templates.empty() && p.clusters.empty()) return p;
  // The planted directories first (their owner is the news), then root.
  std::vector<fs::path> dirs;
  for (const fs::path& dir : {p.templates, p.clusters}) {
    if (dir.empty()) continue;
    // root/env/clusters: env/ too, since whoever may write it may replace clusters/.
    for (fs::path d = dir; d != root && d.has_relative_path(); d = d.parent_path()) dirs.push_back(d);
  }
  dirs.push_back(root);
  for (const fs::path& dir : dirs) {
    // root may be sticky (/tmp): no one else can then replace the user's templates/ or env/ in it.
    const std::string why = why_not_user_controlled(dir, dir == root);
    if (!why.empty() && user_named_a_place) return {p.what + " (left out: " + why + ")", {}, {}, {}, false};
    if (!why.empty()) {
      throw config::ConfigError(fmt::format(
          "{}: {}; jobgen takes templates and cluster profiles that it finds by itself only from directories you "
          "control (owned by you or root, writable by no one else), since they decide what your job runs: make it "
          "yours, or name a place you trust with --templates DIR or JOBGEN_HOME",
          printable(p.what), why));
    }
  }
  p.trust = "yours: " + ownership(root);
  p.checked = true;
  return p;
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
    if ((p.*dir).empty() || !is_file(p.*dir / file)) continue;
    const std::string why = p.checked ? why_not_user_controlled(p.*dir / file) : std::string();
    if (!why.empty()) {
      throw config::ConfigError(
          fmt::format("{} '{}' in {}: {}; jobgen uses a {} it finds by itself only when no one "
                      "but you or root can have written it",
                      kind, printable(name), printable(p.what), why, kind));
    }
    return p.*dir / file;
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
    : places{{"given", std::move(templates), std::move(clusters), "named by you", false}} {}

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

std::string JobgenPaths::origin(const std::filesystem::path& file) const {
  for (const SearchPlace& p : places) {
    for (const fs::path& dir : {p.templates, p.clusters}) {
      if (!dir.empty() && file.parent_path() == dir) return fmt::format("{} ({})", printable(p.what), p.trust);
    }
  }
  return "a path you named";
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
    out += fmt::format("  {}. {} ({})\n       templates: {}\n       profiles:  {}\n", i + 1, printable(p.what), p.trust,
                       dir(p.templates), dir(p.clusters));
  }
  out += fmt::format("a profile that names no executable runs {}", default_executable);
  return out;
}

JobgenPaths find_jobgen_paths(const SearchInputs& in) {
  JobgenPaths paths;
  if (!in.templates_dir.empty()) {
    const fs::path dir = in.templates_dir;
    const fs::path clusters = is_dir(dir / "clusters") ? dir / "clusters" : dir / "env" / "clusters";
    paths.places.push_back(place("--templates " + dir.string(), dir / "templates", clusters));
    if (paths.places.back().templates.empty() && paths.places.back().clusters.empty()) {
      throw config::ConfigError(fmt::format("--templates {}: holds neither templates/ nor clusters/ or env/clusters/",
                                            printable(dir.string())));
    }
  }
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
    paths.places.push_back({"$JOBGEN_HOME (unset)", {}, {}, {}, false});
  }
  const bool named = !in.templates_dir.empty() || (in.jobgen_home != nullptr && *in.jobgen_home != '\0');
  const fs::path repo = in.experiment.empty() ? fs::path() : repository_of(in.experiment);
  if (repo.empty()) {
    paths.places.push_back({in.experiment.empty() ? "the experiment's repository (templates/ and env/clusters/ "
                                                    "above the experiment file; no experiment given)"
                                                  : "the experiment's repository (none above it)",
                            {},
                            {},
                            {},
                            false});
  } else {
    paths.places.push_back(checked_place("the experiment's repository " + repo.string(), repo, repo / "templates",
                                         repo / "env" / "clusters", named));
  }
  if (!in.self_exe.empty()) {
    const fs::path bin = in.self_exe.parent_path();
    const fs::path share = bin.parent_path() / "share" / "hpctrain";
    paths.places.push_back(
        checked_place("the installed tree " + share.string(), share, share / "templates", share / "clusters", named));
    if (is_file(bin / "hpctrain")) paths.default_executable = (bin / "hpctrain").string();
  }
  if (!in.build_source_dir.empty()) {
    paths.places.push_back(checked_place("the source tree jobgen was built from " + in.build_source_dir.string(),
                                         in.build_source_dir, in.build_source_dir / "templates",
                                         in.build_source_dir / "env" / "clusters", named));
  }
  return paths;
}

}  // namespace hpctrain::jobgen
