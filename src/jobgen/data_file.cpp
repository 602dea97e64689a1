#include "jobgen/data_file.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <sstream>

#include "config/config_error.h"
#include "config/toml_input.h"
#include "jobgen/mustache.h"
#include "support/bounded_file.h"
#include "support/json_text.h"

namespace hpctrain::jobgen {
namespace {

nlohmann::json to_json(const toml::node& node) {
  if (const auto* table = node.as_table()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, value] : *table) object[std::string(key.str())] = to_json(value);
    return object;
  }
  if (const auto* array = node.as_array()) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& value : *array) list.push_back(to_json(value));
    return list;
  }
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* b = node.as_boolean()) return b->get();
  std::ostringstream text;  // dates and times
  node.visit([&text](const auto& value) { text << value; });
  return text.str();
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) {
  try {
    return support::read_bounded_file(path, kMaxTemplateBytes, "template");
  } catch (const support::InputError& e) {
    throw RenderError(e.what());
  }
}

nlohmann::json parse_data(const std::string& text, const std::string& origin, bool toml) {
  if (text.size() > kMaxDataBytes) {
    throw RenderError(fmt::format("{}: {} bytes of data, more than {}", origin, text.size(), kMaxDataBytes));
  }
  if (toml) {
    try {
      return to_json(config::parse_toml_text(text, origin, kMaxDataBytes));
    } catch (const config::ConfigError& e) {
      throw RenderError(e.what());
    }
  }
  try {
    support::check_json_depth(text, origin, kMaxJsonDepth);
  } catch (const support::InputError& e) {
    throw RenderError(e.what());
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw RenderError(fmt::format("{}: byte {}: {}", origin, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // Not a syntax error: a number beyond double's range (out_of_range.406).
    throw RenderError(fmt::format("{}: {}", origin, e.what()));
  }
}

nlohmann::json load_data_file(const std::filesystem::path& path) {
  std::string text;
  try {
    text = support::read_bounded_file(path, kMaxDataBytes, "data file");
  } catch (const support::InputError& e) {
    throw RenderError(e.what());
  }
  return parse_data(text, path.string(), path.extension() == ".toml");
}

}  // namespace hpctrain::jobgen
