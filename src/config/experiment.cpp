#include "config/experiment.h"
#include "config/experiment_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "config/config_error.h"
#include "config/hf_model_config.h"
#include "config/section_reader.h"
#include "config/toml_input.h"
#include "support/text.h"

namespace hpctrain::config {
namespace {

constexpr std::size_t kMaxOverrideBytes = std::size_t{64} << 10;
std::vector<std::string> section_names() {
  return {"job",      "model", "data",    "optimizer",  "schedule", "training",
          "parallel", "eval",  "logging", "checkpoint", "slurm",    "sweep"};
}

std::string read_experiment_file(const std::string& path) {
  if (!std::filesystem::exists(path)) throw ConfigError(fmt::format("{}: no such experiment file", path));
  return read_toml_file(path);
}

// A TOML basic string holding `text` exactly.
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + '"';
}

// "section.key=value": the value is TOML ("4096", "true", "[\"a\"]", "'x'") or,
// when it does not parse as TOML, a bare string.
void apply_override(toml::table& root, const std::string& text) {
  const auto eq = text.find('=');
  const std::string key_path = text.substr(0, eq);
  const auto dot = key_path.find('.');
  if (eq == std::string::npos || dot == std::string::npos || key_path.find('.', dot + 1) != std::string::npos ||
      dot == 0 || dot + 1 == key_path.size()) {
    throw ConfigError(fmt::format("--set {}: expected section.key=value", support::printable(text)));
  }
  const std::string section = key_path.substr(0, dot);
  const std::string key = key_path.substr(dot + 1);
  const std::string value = text.substr(eq + 1);
  const std::string origin = "--set " + support::printable(text);
  const std::vector<std::string> sections = section_names();
  if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
    const std::string hint = closest_match(section, sections);
    throw ConfigError(fmt::format("{}: unknown section [{}]{}", origin, section,
                                  hint.empty() ? "" : fmt::format(" (did you mean [{}]?)", hint)));
  }
  if (!root.contains(section)) root.insert(section, toml::table{});
  toml::table* target = root.get(section)->as_table();
  if (target == nullptr) throw ConfigError(fmt::format("{}: [{}] is not a table", origin, section));
  if (value.size() > kMaxOverrideBytes) {
    throw ConfigError(
        fmt::format("{}: a value of {} bytes, more than {}", origin.substr(0, 64), value.size(), kMaxOverrideBytes));
  }
  toml::table parsed;
  bool is_toml = false;
  try {
    check_toml_limits("v = " + value, origin);
    parsed = toml::parse("v = " + value, origin);
    is_toml = true;
  } catch (const ConfigError&) {
    // Too large or too deep: say so. A non-ASCII byte outside a string is
    // refused by the same check, but it only means the value is no TOML.
    const bool non_ascii =
        std::any_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    if (!non_ascii) throw;
  } catch (const toml::parse_error&) {
  }
  if (!is_toml) {
    // Not TOML: the value is a bare string (whose control characters, newlines
    // included, toml_string escapes; invalid UTF-8 stays invalid).
    const std::string quoted = "v = " + toml_string(value);
    check_toml_limits(quoted, origin);
    try {
      parsed = toml::parse(quoted, origin);
    } catch (const toml::parse_error& e) {
      throw ConfigError(fmt::format("{}: neither a TOML value nor a string: {}", origin, e.description()));
    }
  }
  // "1\nc = 2" parses as two keys: a value must be one TOML value.
  if (parsed.size() != 1 || !parsed.contains("v")) {
    throw ConfigError(
        fmt::format("{}: the value is more than one TOML value (a newline?); quote it to set a string: {}.{}='\"...\"'",
                    origin, section, key));
  }
  // Moves the parsed node out of `parsed` (ours, about to die): a move keeps its
  // source region, the --set origin of later errors, which a copy would drop.
  parsed.get("v")->visit([&](auto&& node) {
    target->insert_or_assign(key, std::move(node));  // NOLINT(bugprone-move-forwarding-reference)
  });
}

Experiment resolve(toml::table root, const std::string& path, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) apply_override(root, o);
  {
    // The run directory, where a run stored the config its base model gave.
    toml::table scratch;
    const JobConfig job = JobConfig::read(SectionReader(root, "job", scratch, path), path);
    apply_init_from(root, job.run_dir);
  }

  const std::vector<std::string> sections = section_names();
  for (const auto& [name, node] : root) {
    if (std::find(sections.begin(), sections.end(), name.str()) != sections.end()) continue;
    const std::string hint = closest_match(name.str(), sections);
    if (!node.is_table()) {
      throw ConfigError(fmt::format("{}: key '{}' is outside any section (sections: [{}])", location(node.source()),
                                    name.str(), fmt::join(sections, "], [")));
    }
    throw ConfigError(fmt::format("{}: unknown section [{}]{}", location(node.source()), name.str(),
                                  hint.empty() ? "" : fmt::format(" (did you mean [{}]?)", hint)));
  }

  // Each section reads and checks itself, after the sections its defaults
  // and checks depend on (data.dir defaults from job.name, model.max_seq_len
  // from data.seq_len).
  Experiment e;
  e.path = path;
  toml::table resolved;
  auto reader = [&](const char* section) { return SectionReader(root, section, resolved, path); };
  e.job = JobConfig::read(reader("job"), path);
  e.data = DataConfig::read(reader("data"), e.job);
  e.model = ModelConfig::read(reader("model"), e.data);
  e.optimizer = OptimizerConfig::read(reader("optimizer"));
  e.schedule = ScheduleConfig::read(reader("schedule"));
  e.training = TrainingConfig::read(reader("training"));
  e.parallel = ParallelConfig::read(reader("parallel"));
  e.eval = EvalConfig::read(reader("eval"));
  e.logging = LoggingConfig::read(reader("logging"));
  e.checkpoint = CheckpointConfig::read(reader("checkpoint"));

  // [slurm] and [sweep] belong to jobgen; the trainer accepts them as they are.
  for (const char* passthrough : {"slurm", "sweep"}) {
    if (const toml::node* node = root.get(passthrough)) {
      if (!node->is_table()) {
        throw ConfigError(fmt::format("{}: [{}] must be a table", location(node->source()), passthrough));
      }
      resolved.insert_or_assign(passthrough, *node->as_table());
    }
  }

  std::ostringstream out;
  out << resolved;
  e.resolved_toml = out.str();
  return e;
}

}  // namespace

ExperimentSource::ExperimentSource(std::string path, std::vector<std::string> overrides)
    : path_(std::move(path)), text_(read_experiment_file(path_)), overrides_(std::move(overrides)) {}

toml::table ExperimentSource::table(const std::vector<std::string>& more) const {
  toml::table root = parse_toml_text(text_, path_);
  for (const auto& o : overrides_) apply_override(root, o);
  for (const auto& o : more) apply_override(root, o);
  return root;
}

Experiment ExperimentSource::resolve(const std::vector<std::string>& more) const {
  return config::resolve(table(more), path_, {});
}

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  return resolve(parse_toml_text(read_experiment_file(path), path), path, overrides);
}

Experiment load_experiment_text(const std::string& text, const std::string& origin,
                                const std::vector<std::string>& overrides) {
  return resolve(parse_toml_text(text, origin), origin, overrides);
}

}  // namespace hpctrain::config
