#include "config/section_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

#include "config/config_error.h"

namespace hpctrain::config {
namespace {

std::string type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

}  // namespace

std::string location(const toml::source_region& region) {
  std::string path = region.path ? std::string(*region.path) : "<input>";
  if (path.rfind("--set ", 0) == 0) return path;
  return fmt::format("{}:{}:{}", path, region.begin.line, region.begin.column);
}

SectionReader::SectionReader(const toml::table& root, std::string section, toml::table& resolved, std::string file)
    : root_(&root), file_(std::move(file)), section_(std::move(section)), resolved_(&resolved) {
  if (const toml::node* node = root.get(section_)) {
    table_ = node->as_table();
    if (table_ == nullptr) {
      throw ConfigError(
          fmt::format("{}: [{}] must be a table, not {}", location(node->source()), section_, type_name(*node)));
    }
  }
  resolved_->insert_or_assign(section_, toml::table{});
  resolved_ = resolved_->get(section_)->as_table();
}

std::string SectionReader::origins(std::initializer_list<std::pair<const char*, const char*>> keys) const {
  std::vector<std::string> found;
  for (const auto& [section, key] : keys) {
    const toml::node* node = root_->at_path(std::string(section) + "." + key).node();
    if (node == nullptr) continue;
    const std::string where = location(node->source());
    if (std::find(found.begin(), found.end(), where) == found.end()) found.push_back(where);
  }
  return found.empty() ? file_ : fmt::format("{}", fmt::join(found, ", "));
}

void SectionReader::fail(const toml::node& node, const std::string& key, const std::string& what) const {
  throw ConfigError(fmt::format("{}: {}.{}: {}", location(node.source()), section_, key, what));
}

const toml::node* SectionReader::find(const std::string& key) {
  known_.insert(key);
  return table_ != nullptr ? table_->get(key) : nullptr;
}

bool SectionReader::retired(const std::string& key) { return find(key) != nullptr; }

std::int64_t SectionReader::integer(const std::string& key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
  std::int64_t value = fallback;
  if (const toml::node* node = find(key)) {
    const auto v = node->value_exact<std::int64_t>();
    if (!v) fail(*node, key, fmt::format("expected an integer, got {}", type_name(*node)));
    value = *v;
    if (value < min || value > max) fail(*node, key, fmt::format("{} is out of range [{}, {}]", value, min, max));
  }
  resolved_->insert_or_assign(key, value);
  return value;
}

double SectionReader::number(const std::string& key, double fallback, double min, double max) {
  double value = fallback;
  if (const toml::node* node = find(key)) {
    const auto v = node->value<double>();  // an integer is a fine number
    if (!v || node->is_boolean()) fail(*node, key, fmt::format("expected a number, got {}", type_name(*node)));
    value = *v;
    if (!(value >= min && value <= max)) fail(*node, key, fmt::format("{} is out of range [{}, {}]", value, min, max));
  }
  resolved_->insert_or_assign(key, value);
  return value;
}

bool SectionReader::boolean(const std::string& key, bool fallback) {
  bool value = fallback;
  if (const toml::node* node = find(key)) {
    const auto v = node->value_exact<bool>();
    if (!v) fail(*node, key, fmt::format("expected true or false, got {}", type_name(*node)));
    value = *v;
  }
  resolved_->insert_or_assign(key, value);
  return value;
}

std::string SectionReader::string(const std::string& key, const std::string& fallback) {
  std::string value = fallback;
  if (const toml::node* node = find(key)) {
    const auto v = node->value_exact<std::string>();
    if (!v) fail(*node, key, fmt::format("expected a string, got {}", type_name(*node)));
    value = *v;
  }
  resolved_->insert_or_assign(key, value);
  return value;
}

std::string SectionReader::choice(const std::string& key, const std::string& fallback,
                                  const std::vector<std::string>& allowed) {
  std::string value = string(key, fallback);
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    const std::string hint = closest_match(value, allowed);
    fail(*table_->get(key), key,
         fmt::format("'{}' is not one of {}{}", value, fmt::join(allowed, ", "),
                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
  }
  return value;
}

std::vector<std::string> SectionReader::strings(const std::string& key, const std::vector<std::string>& fallback) {
  std::vector<std::string> value = fallback;
  if (const toml::node* node = find(key)) {
    const toml::array* array = node->as_array();
    if (array == nullptr) fail(*node, key, fmt::format("expected an array of strings, got {}", type_name(*node)));
    value.clear();
    for (const toml::node& item : *array) {
      const auto s = item.value_exact<std::string>();
      if (!s) fail(item, key, fmt::format("expected an array of strings, but an element is {}", type_name(item)));
      value.push_back(*s);
    }
  }
  toml::array out;
  for (const auto& s : value) out.push_back(s);
  resolved_->insert_or_assign(key, std::move(out));
  return value;
}

std::vector<std::string> SectionReader::strings_of(const std::string& key, const std::vector<std::string>& fallback,
                                                   const std::vector<std::string>& allowed) {
  std::vector<std::string> value = strings(key, fallback);
  const toml::node* node = table_ != nullptr ? table_->get(key) : nullptr;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (std::find(allowed.begin(), allowed.end(), value[i]) != allowed.end()) continue;
    const toml::node* at = node != nullptr && node->as_array() != nullptr ? node->as_array()->get(i) : node;
    // No node: the value is a default, and every default is one of the choices.
    if (at == nullptr) throw std::logic_error(fmt::format("{}.{}: default '{}' not allowed", section_, key, value[i]));
    const std::string hint = closest_match(value[i], allowed);
    fail(*at, key,
         fmt::format("'{}' is not one of {}{}", value[i], fmt::join(allowed, ", "),
                     hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint)));
  }
  return value;
}

void SectionReader::finish() const {
  if (table_ == nullptr) return;
  const std::vector<std::string> candidates(known_.begin(), known_.end());
  for (const auto& [key, node] : *table_) {
    if (known_.count(std::string(key.str())) != 0) continue;
    const std::string hint = closest_match(key.str(), candidates);
    // A key from a file knows where it stands; one added by --set does not, but its value does.
    const toml::source_region& where = key.source().path ? key.source() : node.source();
    throw ConfigError(fmt::format("{}: unknown key {}.{}{}", location(where), section_, key.str(),
                                  hint.empty() ? "" : fmt::format(" (did you mean {}.{}?)", section_, hint)));
  }
}

}  // namespace hpctrain::config
