#include "jobgen/sweep.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::jobgen {
namespace {

using config::ConfigError;
using config::location;

constexpr std::size_t kMaxRuns = 100000;

struct Parameter {
  std::string key;
  std::vector<std::string> values;                   // TOML text
  std::pair<std::uint32_t, std::uint32_t> position;  // line, column: toml++ tables iterate by name, we want file order
};

std::string toml_text(const toml::node& node) {
  if (const auto* f = node.as_floating_point()) {
    // The shortest text that reads back as the same double (toml++ prints 17 digits).
    std::string text = fmt::format("{}", f->get());
    if (text.find_first_of(".eni") == std::string::npos) text += ".0";
    return text;
  }
  std::ostringstream out;
  node.visit([&out](const auto& value) { out << value; });
  return out.str();
}

nlohmann::json json_value(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* b = node.as_boolean()) return b->get();
  return toml_text(node);
}

// "section.key" = [...], or nested: [sweep.parameters.section] key = [...].
void collect(const toml::table& table, const std::string& prefix, std::vector<Parameter>& out) {
  for (const auto& [key, node] : table) {
    const std::string name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* nested = node.as_table()) {
      collect(*nested, name, out);
      continue;
    }
    const auto* array = node.as_array();
    if (array == nullptr || array->empty()) {
      throw ConfigError(
          fmt::format("{}: sweep.parameters.{} must be a non-empty array of values", location(node.source()), name));
    }
    if (std::count(name.begin(), name.end(), '.') != 1) {
      throw ConfigError(fmt::format("{}: sweep parameter '{}' must name section.key", location(node.source()), name));
    }
    Parameter p{name, {}, {node.source().begin.line, node.source().begin.column}};
    p.values.reserve(array->size());
    for (const auto& value : *array) p.values.push_back(toml_text(value));
    out.push_back(std::move(p));
  }
}

}  // namespace

Sweep read_sweep(const toml::table& experiment) {
  Sweep sweep;
  const toml::table* section = experiment.get_as<toml::table>("sweep");
  if (section == nullptr) return sweep;
  toml::table copy = *section;
  const toml::node* parameters_node = section->get("parameters");
  if (parameters_node == nullptr || !parameters_node->is_table()) {
    throw ConfigError(fmt::format("{}: [sweep] needs a [sweep.parameters] table", location(section->source())));
  }
  copy.erase("parameters");
  toml::table root;
  root.insert("sweep", std::move(copy));
  toml::table resolved;
  config::SectionReader r(root, "sweep", resolved);
  sweep.mode = r.choice("mode", SweepMode::kGrid);
  sweep.max_parallel = r.integer("max_parallel", 0, 0, 100000);
  r.finish();

  std::vector<Parameter> parameters;
  collect(*parameters_node->as_table(), "", parameters);
  std::sort(parameters.begin(), parameters.end(),
            [](const Parameter& a, const Parameter& b) { return a.position < b.position; });
  if (parameters.empty()) {
    throw ConfigError(fmt::format("{}: [sweep.parameters] is empty", location(parameters_node->source())));
  }
  std::size_t count = 1;
  if (sweep.mode == SweepMode::kZip) {
    count = parameters.front().values.size();
    for (const auto& p : parameters) {
      if (p.values.size() != count) {
        throw ConfigError(fmt::format("{}: sweep mode zip needs equal lengths: {} has {} values, {} has {}",
                                      location(parameters_node->source()), parameters.front().key, count, p.key,
                                      p.values.size()));
      }
    }
  } else {
    // Checked before each multiplication: 64 parameters of two values would wrap to 0.
    for (const auto& p : parameters) {
      if (count > kMaxRuns / p.values.size()) {
        throw ConfigError(fmt::format("{}: [sweep] makes more than {} runs, more than an array may hold",
                                      location(parameters_node->source()), kMaxRuns));
      }
      count *= p.values.size();
    }
  }
  if (count > kMaxRuns) {
    throw ConfigError(fmt::format("{}: [sweep] makes {} runs, more than an array may hold ({})",
                                  location(parameters_node->source()), count, kMaxRuns));
  }
  for (std::size_t i = 0; i < count; ++i) {
    SweepPoint point;
    std::size_t rest = i;
    // Grid: the last parameter varies fastest.
    std::vector<std::size_t> pick(parameters.size());
    for (std::size_t k = parameters.size(); k-- > 0;) {
      if (sweep.mode == SweepMode::kZip) {
        pick[k] = i;
      } else {
        pick[k] = rest % parameters[k].values.size();
        rest /= parameters[k].values.size();
      }
    }
    for (std::size_t k = 0; k < parameters.size(); ++k) {
      point.overrides.emplace_back(parameters[k].key, parameters[k].values[pick[k]]);
    }
    sweep.points.push_back(std::move(point));
  }
  return sweep;
}

nlohmann::json sweep_manifest(const Sweep& sweep) {
  nlohmann::json manifest = nlohmann::json::object();
  for (std::size_t i = 0; i < sweep.points.size(); ++i) {
    nlohmann::json entry = nlohmann::json::object();
    for (const auto& [key, value] : sweep.points[i].overrides) {
      // The TOML text parses back to the value the run receives.
      const auto parsed = toml::parse("v = " + value);
      entry[key] = json_value(*parsed.get("v"));
    }
    manifest[std::to_string(i)] = entry;
  }
  return manifest;
}

}  // namespace hpctrain::jobgen
