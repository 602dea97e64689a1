#include "jobgen/cluster_profile.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <algorithm>

#include "config/config_error.h"
#include "config/section_reader.h"
#include "config/toml_input.h"

namespace hpctrain::jobgen {
namespace {

void apply(ClusterProfile& p, const std::filesystem::path& path, const std::string& name_or_file,
           const JobgenPaths& paths, int depth) {
  if (depth > 16) throw config::ConfigError(fmt::format("{}: profiles inherit in a cycle", path.string()));
  if (!std::filesystem::is_regular_file(path)) {
    throw config::ConfigError(fmt::format("cluster profile {}: no such file {}", name_or_file, path.string()));
  }
  toml::table root = config::parse_toml_file(path);
  // Wrap the file as one section so SectionReader checks keys, types and spelling.
  toml::table env;
  if (const auto* e = root.get("env")) {
    if (!e->is_table())
      throw config::ConfigError(fmt::format("{}: env must be a table", config::location(e->source())));
    env = *e->as_table();
    root.erase("env");
  }
  toml::table wrapper;
  wrapper.insert("profile", std::move(root));
  toml::table resolved;
  config::SectionReader r(wrapper, "profile", resolved);
  const std::string parent = r.string("inherits", "");
  // The parent first, then this file's keys win. A site's profiles inherit
  // each other, so the parent is looked for beside this file first.
  if (!parent.empty()) apply(p, paths.cluster_file(parent, path.parent_path()), parent, paths, depth + 1);
  p.chain.insert(p.chain.begin(), path.string());
  p.partition = r.string("partition", p.partition);
  p.account = r.string("account", p.account);
  p.qos = r.string("qos", p.qos);
  p.constraint = r.string("constraint", p.constraint);
  p.gpus_per_node = r.integer("gpus_per_node", p.gpus_per_node, 0, 1024);
  p.cpus_per_node = r.integer("cpus_per_node", p.cpus_per_node, 0, 1 << 20);
  for (const auto& m : r.strings("modules", {})) p.modules.push_back(m);
  p.executable = r.string("executable", p.executable);
  p.mpi = r.choice("mpi", p.mpi, {"pmi2", "pmix", "none"});
  const std::string here = "profile " + path.string();
  if (wrapper["profile"].as_table()->contains("signal_lead_s")) p.signal_lead_s_source = here;
  p.signal_lead_s = r.integer("signal_lead_s", p.signal_lead_s, 0, 86400);
  if (wrapper["profile"].as_table()->contains("on_preempt")) p.on_preempt_source = here;
  p.on_preempt = r.choice("on_preempt", p.on_preempt, {"requeue", "resubmit", "stop"});
  r.finish();
  for (const auto& [key, value] : env) {
    if (!value.is_string()) {
      throw config::ConfigError(
          fmt::format("{}: env.{} must be a string", config::location(value.source()), key.str()));
    }
    const std::string name(key.str());
    std::erase_if(p.env, [&name](const auto& item) { return item.first == name; });
    p.env.emplace_back(name, value.as_string()->get());
  }
}

}  // namespace

ClusterProfile load_cluster_profile(const std::string& name_or_file, const JobgenPaths& paths) {
  ClusterProfile p;
  p.name = name_or_file;
  p.executable = paths.default_executable;
  apply(p, paths.cluster_file(name_or_file), name_or_file, paths, 0);
  return p;
}

}  // namespace hpctrain::jobgen
