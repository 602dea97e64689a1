#include "jobgen/site_options.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "cluster/hostlist.h"
#include "config/config_error.h"
#include "jobgen/encoding.h"
#include "jobgen/shell_command.h"

namespace hpctrain::jobgen {
namespace {

using config::ConfigError;

constexpr std::size_t kMaxExtraOptions = 64;
constexpr std::size_t kMaxSrunArgs = 64;
constexpr std::size_t kMaxValueBytes = 4096;

// Options jobgen sets itself: a [slurm.extra] entry would contradict them.
const std::map<std::string, std::string>& owned_options() {
  static const std::map<std::string, std::string> owned{
      {"job-name", "slurm.job_name"},
      {"partition", "slurm.partition"},
      {"account", "slurm.account"},
      {"qos", "slurm.qos"},
      {"constraint", "slurm.constraint"},
      {"nodes", "slurm.nodes"},
      {"ntasks-per-node", "slurm.ntasks_per_node"},
      {"cpus-per-task", "slurm.cpus_per_task"},
      {"gpus-per-node", "slurm.gpus_per_node"},
      {"gpus-per-task", "slurm.gpus_per_task"},
      {"gpu-bind", "slurm.gpu_bind"},
      {"mem", "slurm.mem"},
      {"time", "slurm.time"},
      {"signal", "checkpoint.signal and slurm.signal_lead_s"},
      {"requeue", "nothing: jobgen sets it, preemption requeues the job"},
      {"no-requeue", "nothing: jobgen sets --requeue, preemption requeues the job"},
      {"open-mode", "nothing: jobgen appends to one log across requeues"},
      {"array", "[sweep]"},
      {"output", "slurm.log_dir"},
      {"error", "slurm.log_dir (the script's errors go to its log)"},
      {"dependency", "jobgen --after or --singleton"},
      {"exclusive", "slurm.exclusive"},
      {"reservation", "slurm.reservation"},
      {"nodelist", "slurm.nodelist"},
      {"exclude", "slurm.exclude"},
      {"mail-type", "slurm.mail_type"},
      {"mail-user", "slurm.mail_user"},
      {"wrap", "nothing: jobgen writes the script"},
      {"help", "nothing: not an option for a batch script"},
      {"usage", "nothing: not an option for a batch script"},
      {"version", "nothing: not an option for a batch script"},
  };
  return owned;
}

bool is_option_name(const std::string& name) {
  return !name.empty() && name.size() <= 64 && name.front() >= 'a' && name.front() <= 'z' && name.back() != '-' &&
         name.find("--") == std::string::npos &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
}

std::string where(const toml::node* node) { return node != nullptr ? config::location(node->source()) : "default"; }

// A value for an sbatch or srun option: printable, no spaces (SLURM splits on
// them), bounded. The encoders quote whatever remains.
void check_word(const std::string& value, const std::string& field, const std::string& what) {
  const bool printable_ascii = std::all_of(value.begin(), value.end(), [](char c) { return c > ' ' && c < 0x7f; });
  if (value.empty() || value.size() > kMaxValueBytes || !printable_ascii) {
    throw ConfigError(fmt::format("{}: '{}' is not {} (printable ASCII without spaces, 1 to {} bytes)", field,
                                  printable(value.substr(0, 200)), what, kMaxValueBytes));
  }
}

// SLURM's binding specifications: "closest", "map_gpu:0,1", "verbose,cores",
// "mask_cpu:0x3,0xC".
void check_binding(const std::string& value, const std::string& field) {
  if (value.empty() || value.size() > 1024 ||
      value.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_,:.-") !=
          std::string::npos) {
    throw ConfigError(fmt::format(
        "{}: '{}' is not a SLURM binding (letters, digits and _ , : . - as in \"closest\" or \"map_gpu:0,1\")", field,
        printable(value.substr(0, 200))));
  }
}

void check_mail_type(const std::string& value, const std::string& field) {
  static const std::vector<std::string> allowed{
      "NONE",      "BEGIN",      "END",           "FAIL",          "REQUEUE",       "ALL",        "INVALID_DEPEND",
      "STAGE_OUT", "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS"};
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = value.find(',', start);
    std::string part = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    std::transform(part.begin(), part.end(), part.begin(),
                   [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; });
    if (std::find(allowed.begin(), allowed.end(), part) == allowed.end()) {
      const std::string hint = config::closest_match(part, allowed);
      throw ConfigError(fmt::format("{}: '{}' is not a SLURM mail type ({}, comma-separated){}", field,
                                    printable(part.substr(0, 200)), fmt::join(allowed, ", "),
                                    hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
}

// Expanded by the same parser hpctrain uses for SLURM_JOB_NODELIST (which the
// cluster tests hold against scontrol), so a typo fails here, not in the queue.
void check_hostlist(const std::string& value, const std::string& field) {
  check_word(value, field, "a SLURM host list");
  try {
    (void)cluster::expand_hostlist(value);
  } catch (const std::exception& e) {
    throw ConfigError(fmt::format("{}: {}", field, e.what()));
  }
}

}  // namespace

std::vector<SbatchOption> take_sbatch_extra(toml::table& slurm) {
  std::vector<SbatchOption> extra;
  toml::node* node = slurm.get("extra");
  if (node == nullptr) return extra;
  const toml::table* table = node->as_table();
  if (table == nullptr) {
    throw ConfigError(fmt::format(
        "{}: slurm.extra must be a table of sbatch long options, as in [slurm.extra] \"mem-per-gpu\" = \"40G\"",
        where(node)));
  }
  if (table->size() > kMaxExtraOptions) {
    throw ConfigError(
        fmt::format("{}: slurm.extra has {} options, more than {}", where(node), table->size(), kMaxExtraOptions));
  }
  for (const auto& [key, value] : *table) {
    const std::string name(key.str());
    const std::string at = fmt::format("{}: slurm.extra.\"{}\"", where(&value), printable(name.substr(0, 80)));
    if (!is_option_name(name)) {
      throw ConfigError(fmt::format(
          "{}: not an sbatch long option name (lowercase letters, digits and '-', as in \"mem-per-gpu\")", at));
    }
    SbatchOption option{name, {}, where(&value), true};
    if (const auto s = value.value_exact<std::string>()) {
      check_word(*s, at, "an sbatch option value; for a bare flag write true");
      option.value = *s;
    } else if (const auto i = value.value_exact<std::int64_t>()) {
      option.value = std::to_string(*i);
    } else if (const auto b = value.value_exact<bool>()) {
      if (!*b) continue;  // false: left out
    } else {
      throw ConfigError(fmt::format("{}: expected a string, an integer, or true for a bare flag", at));
    }
    extra.push_back(std::move(option));
  }
  slurm.erase("extra");
  return extra;
}

SiteOptions read_site_options(config::SectionReader& reader, const toml::table* slurm) {
  auto node = [slurm](const char* key) { return slurm != nullptr ? slurm->get(key) : nullptr; };
  auto field = [&](const char* key) { return fmt::format("{}: slurm.{}", where(node(key)), key); };
  SiteOptions site;
  auto add = [&](const char* key, const std::string& option, const std::string& value) {
    site.sbatch.push_back({option, value, where(node(key)), false});
  };

  if (const auto gpus = reader.integer("gpus_per_task", 0, 0, 1024); gpus > 1) {
    throw ConfigError(
        fmt::format("{} = {}: hpctrain runs one rank per GPU, so a task uses one GPU; set 1 (or leave it out)",
                    field("gpus_per_task"), gpus));
  } else if (gpus == 1) {
    add("gpus_per_task", "gpus-per-task", "1");
  }
  if (const toml::node* exclusive = node("exclusive"); exclusive != nullptr && exclusive->is_string()) {
    add("exclusive", "exclusive", reader.choice("exclusive", "", {"user", "mcs"}));
  } else if (reader.boolean("exclusive", false)) {
    add("exclusive", "exclusive", "");
  }
  if (auto v = reader.string("reservation", ""); !v.empty()) {
    check_word(v, field("reservation"), "a reservation name");
    add("reservation", "reservation", v);
  }
  if (auto v = reader.string("nodelist", ""); !v.empty()) {
    check_hostlist(v, field("nodelist"));
    add("nodelist", "nodelist", v);
  }
  if (auto v = reader.string("exclude", ""); !v.empty()) {
    check_hostlist(v, field("exclude"));
    add("exclude", "exclude", v);
  }
  if (auto v = reader.string("mail_type", ""); !v.empty()) {
    check_mail_type(v, field("mail_type"));
    add("mail_type", "mail-type", v);
  }
  if (auto v = reader.string("mail_user", ""); !v.empty()) {
    check_word(v, field("mail_user"), "a mail address or user name");
    add("mail_user", "mail-user", v);
  }
  // Binding applies to the tasks a step launches: srun's options.
  if (auto v = reader.string("cpu_bind", ""); !v.empty()) {
    check_binding(v, field("cpu_bind"));
    site.srun.push_back({"--cpu-bind=" + v, where(node("cpu_bind"))});
  }
  if (auto v = reader.string("gpu_bind", ""); !v.empty()) {
    check_binding(v, field("gpu_bind"));
    site.srun.push_back({"--gpu-bind=" + v, where(node("gpu_bind"))});
  }
  const auto args = reader.strings("srun_args", {});
  if (args.size() > kMaxSrunArgs) {
    throw ConfigError(fmt::format("{}: {} arguments, more than {}", field("srun_args"), args.size(), kMaxSrunArgs));
  }
  for (const auto& arg : args) {
    if (arg.empty() || arg.size() > kMaxValueBytes) {
      throw ConfigError(
          fmt::format("{}: an argument is empty or longer than {} bytes", field("srun_args"), kMaxValueBytes));
    }
    site.srun.push_back({arg, where(node("srun_args"))});
  }
  return site;
}

void add_sbatch_extra(SiteOptions& site, const std::vector<SbatchOption>& extra) {
  for (const auto& option : extra) {
    if (const auto owned = owned_options().find(option.name); owned != owned_options().end()) {
      throw ConfigError(fmt::format("{}: slurm.extra.\"{}\": jobgen sets --{} itself; use {}", option.source,
                                    option.name, option.name, owned->second));
    }
  }
  site.sbatch.insert(site.sbatch.end(), extra.begin(), extra.end());
  if (!extra.empty()) site.extra_checked_by = "not checked by sbatch";
}

void ask_sbatch_about_extra(SiteOptions& site) {
  if (site.extra_checked_by.empty()) return;  // no [slurm.extra]
  if (run_command("sbatch --version 2>&1").status != 0) {
    site.extra_checked_by = "not checked: sbatch cannot run here (not installed, or no SLURM configuration)";
    return;
  }
  // sbatch's parser, not `sbatch --help`: 22.05's help leaves out options
  // sbatch takes (--hint, --prefer, --acctg-freq among them).
  for (const auto& option : site.sbatch) {
    if (!option.extra) continue;
    const std::string word = option.value.empty() ? "--" + option.name : "--" + option.name + "=" + option.value;
    const auto [status, out] = run_command("sbatch " + shell_word(word, option.source) + " --version 2>&1");
    if (status != 0) {
      throw ConfigError(fmt::format("{}: slurm.extra.\"{}\": sbatch refuses {}: {}", option.source, option.name,
                                    printable(word), printable(first_line(out))));
    }
  }
  site.extra_checked_by = "checked by the installed sbatch";
}

}  // namespace hpctrain::jobgen
