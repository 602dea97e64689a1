#include "jobgen/slurm_request.h"

#include <fmt/format.h>

#include <toml++/toml.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::jobgen {
namespace {

using config::ConfigError;

std::int64_t number(const std::string& text, const std::string& field) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 9) {
    throw ConfigError(fmt::format("{}: '{}' is not a SLURM time (M, M:S, H:M:S, D-H, D-H:M or D-H:M:S)", field, text));
  }
  return std::stoll(text);
}

// sbatch --mem: an integer with an optional K, M, G or T suffix (megabytes
// without one). Checked here so a bad value is named with its source instead
// of failing at submission.
void check_slurm_memory(const std::string& text, const std::string& field) {
  const std::size_t digits = text.find_first_not_of("0123456789");
  const bool ok = digits != 0 && !text.empty() &&
                  (digits == std::string::npos ||
                   (digits + 1 == text.size() && std::string("KMGTkmgt").find(text[digits]) != std::string::npos));
  if (!ok) {
    throw ConfigError(fmt::format(
        "{}: '{}' is not a SLURM memory size (a number with an optional K, M, G or T suffix; megabytes without one)",
        field, text));
  }
}

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t at; (at = text.find(by, start)) != std::string::npos; start = at + 1) {
    parts.push_back(text.substr(start, at - start));
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

std::int64_t parse_slurm_time(const std::string& text, const std::string& field) {
  std::int64_t days = 0;
  std::string rest = text;
  const auto dash = text.find('-');
  if (dash != std::string::npos) {
    days = number(text.substr(0, dash), field);
    rest = text.substr(dash + 1);
  }
  const auto parts = split(rest, ':');
  if (parts.size() > 3) return number("x", field);  // throws
  std::vector<std::int64_t> v;
  v.reserve(parts.size());
  for (const auto& p : parts) v.push_back(number(p, field));
  if (dash != std::string::npos) {  // D-H, D-H:M, D-H:M:S
    const std::int64_t h = v[0];
    const std::int64_t m = v.size() > 1 ? v[1] : 0;
    const std::int64_t s = v.size() > 2 ? v[2] : 0;
    return ((days * 24 + h) * 60 + m) * 60 + s;
  }
  if (v.size() == 1) return v[0] * 60;         // M
  if (v.size() == 2) return v[0] * 60 + v[1];  // M:S
  return (v[0] * 60 + v[1]) * 60 + v[2];       // H:M:S
}

SlurmRequest read_slurm_request(toml::table root, const config::Experiment& experiment, const ClusterProfile& profile) {
  // [slurm.env] is a table of its own; take it out before the key check.
  SlurmRequest r;
  if (auto* slurm = root.get("slurm"); slurm != nullptr && slurm->is_table()) {
    if (auto* env = slurm->as_table()->get("env")) {
      if (!env->is_table())
        throw ConfigError(fmt::format("{}: slurm.env must be a table", config::location(env->source())));
      for (const auto& [key, value] : *env->as_table()) {
        const std::string where = config::location(value.source());
        if (const auto* s = value.as_string()) {
          r.env.push_back({std::string(key.str()), s->get(), false, where});
        } else if (const auto* t = value.as_table();
                   t != nullptr && t->size() == 1 && t->get_as<std::string>("runtime")) {
          r.env.push_back({std::string(key.str()), t->get_as<std::string>("runtime")->get(), true, where});
        } else {
          throw ConfigError(
              fmt::format("{}: slurm.env.{} must be a string, or {{ runtime = \"...\" }} for a value "
                          "that expands at run time",
                          where, key.str()));
        }
      }
      slurm->as_table()->erase("env");
    }
  }
  std::vector<SbatchOption> extra;
  if (auto* slurm = root.get_as<toml::table>("slurm")) extra = take_sbatch_extra(*slurm);
  // time = 01:00:00 unquoted is a TOML time: take it as the SLURM time it means.
  std::string time_source;
  if (auto* slurm = root.get_as<toml::table>("slurm")) {
    if (const auto* t = slurm->get_as<toml::time>("time")) {
      time_source = config::location(t->source());
      const toml::time value = t->get();
      slurm->insert_or_assign("time", fmt::format("{:02}:{:02}:{:02}", value.hour, value.minute, value.second));
    }
  }
  toml::table resolved;
  config::SectionReader s(root, "slurm", resolved);
  const toml::table* table = root.get_as<toml::table>("slurm");
  auto source_of = [&](const char* key, const std::string& fallback_source) {
    const toml::node* node = table != nullptr ? table->get(key) : nullptr;
    return node != nullptr ? config::location(node->source()) : fallback_source;
  };
  auto text = [&](const char* key, const std::string& fallback, const std::string& fallback_source) {
    return Sourced{s.string(key, fallback), source_of(key, fallback_source)};
  };
  auto integer = [&](const char* key, std::int64_t fallback, std::int64_t min, std::int64_t max,
                     const std::string& fallback_source) {
    return Sourced{std::to_string(s.integer(key, fallback, min, max)), source_of(key, fallback_source)};
  };
  const std::string from_profile = "profile " + profile.name;
  r.job_name = text("job_name", experiment.job.name, "job.name");
  r.partition = text("partition", profile.partition, from_profile);
  r.account = text("account", profile.account, from_profile);
  r.qos = text("qos", profile.qos, from_profile);
  r.constraint = text("constraint", profile.constraint, from_profile);
  r.mem = text("mem", "", "default");
  r.time = text("time", "01:00:00", "default");
  if (!time_source.empty()) r.time.source = time_source;
  r.nodes = integer("nodes", 1, 1, 100000, "default");
  r.ntasks_per_node = integer("ntasks_per_node", 1, 1, 4096, "default");
  r.cpus_per_task = integer("cpus_per_task", 0, 0, 4096, "default");
  r.gpus_per_node = integer("gpus_per_node", profile.gpus_per_node, 0, 1024, from_profile);
  // The batch shell forwards slurm.signal to the step, and the step listens
  // for checkpoint.signal: two keys for one fact, so they must agree, or the
  // job would die at the time limit without its checkpoint.
  const config::Signal signal = s.choice("signal", experiment.checkpoint.signal);
  r.signal = Sourced{std::string(config::name_of(signal)), source_of("signal", "checkpoint.signal")};
  if (signal != experiment.checkpoint.signal) {
    const toml::node* listened = root.at_path("checkpoint.signal").node();
    throw ConfigError(fmt::format(
        "{}: slurm.signal = \"{}\" but checkpoint.signal = \"{}\" ({}): the batch script would forward a signal "
        "hpctrain does not listen for; set checkpoint.signal alone (slurm.signal follows it)",
        r.signal.source, r.signal.value, config::name_of(experiment.checkpoint.signal),
        listened != nullptr ? config::location(listened->source()) : "its default"));
  }
  // 0: no early warning (sites that do not deliver --signal); SIGTERM still checkpoints.
  r.signal_lead_s = integer("signal_lead_s", profile.signal_lead_s, 0, 86400,
                            profile.signal_lead_s_source.empty() ? "default" : profile.signal_lead_s_source);
  r.max_restarts = integer("max_restarts", 3, 0, 1000, "default");
  // requeue (scontrol requeue, falling back to resubmit), resubmit (sbatch the same script again) or stop.
  r.on_preempt =
      Sourced{s.choice("on_preempt", profile.on_preempt, {"requeue", "resubmit", "stop"}),
              source_of("on_preempt", profile.on_preempt_source.empty() ? "default" : profile.on_preempt_source)};
  r.log_dir = text("log_dir", "logs", "default");
  r.executable = text("executable", profile.executable, from_profile);
  r.site = read_site_options(s, table);
  s.finish();
  add_sbatch_extra(r.site, extra);

  r.time_seconds = parse_slurm_time(r.time.value, fmt::format("{}: slurm.time", r.time.source));
  if (!r.mem.value.empty()) check_slurm_memory(r.mem.value, fmt::format("{}: slurm.mem", r.mem.source));
  if (std::stoll(r.signal_lead_s.value) >= r.time_seconds) {
    throw ConfigError(fmt::format(
        "{}: slurm.signal_lead_s = {} s is not shorter than the time limit slurm.time = \"{}\" ({} s, {}): the "
        "preemption signal would come before the job starts",
        r.signal_lead_s.source, r.signal_lead_s.value, r.time.value, r.time_seconds, r.time.source));
  }
  const auto gpus = std::stoll(r.gpus_per_node.value);
  const auto tasks = std::stoll(r.ntasks_per_node.value);
  if (gpus > 0 && gpus != tasks) {
    throw ConfigError(fmt::format(
        "{}: slurm.ntasks_per_node = {} but the nodes have {} GPUs ({}): hpctrain runs one rank per GPU, so set "
        "ntasks_per_node = {}",
        r.ntasks_per_node.source, tasks, gpus, r.gpus_per_node.source, gpus));
  }
  const auto cpus = std::stoll(r.cpus_per_task.value);
  if (profile.cpus_per_node > 0 && cpus * tasks > profile.cpus_per_node) {
    throw ConfigError(
        fmt::format("{}: {} tasks x {} CPUs per task = {} CPUs, more than the {} a node of profile {} has",
                    r.cpus_per_task.source, tasks, cpus, cpus * tasks, profile.cpus_per_node, profile.name));
  }
  return r;
}

}  // namespace hpctrain::jobgen
