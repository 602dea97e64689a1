#include "jobgen/data_file.h"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <fstream>
#include <sstream>

#include "jobgen/mustache.h"

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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RenderError(fmt::format("{}: cannot read", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json load_data_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw RenderError(fmt::format("{}: cannot read", path.string()));
  if (path.extension() == ".toml") {
    try {
      return to_json(toml::parse_file(path.string()));
    } catch (const toml::parse_error& e) {
      throw RenderError(
          fmt::format("{}:{}:{}: {}", path.string(), e.source().begin.line, e.source().begin.column, e.description()));
    }
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw RenderError(fmt::format("{}: byte {}: {}", path.string(), e.byte, e.what()));
  }
}

}  // namespace hpctrain::jobgen
