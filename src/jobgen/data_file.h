// Template data for `jobgen render --data FILE`: a JSON file, or a TOML file
// turned into the same JSON shape (tables are objects, arrays are lists, dates
// and times their TOML text). Templates and data may come from anyone, so
// sizes and nesting are bounded before parsing.
#pragma once

#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace hpctrain::jobgen {

constexpr std::size_t kMaxTemplateBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxDataBytes = std::size_t{16} << 20;
constexpr int kMaxJsonDepth = 64;

// A whole template or partial: a regular file of at most kMaxTemplateBytes;
// throws RenderError naming it.
std::string read_text_file(const std::filesystem::path& path);

// JSON text (nested at most kMaxJsonDepth deep, checked before parsing), or
// TOML text when `toml` is set; throws RenderError naming ORIGIN and where.
nlohmann::json parse_data(const std::string& text, const std::string& origin, bool toml);

// A data file: TOML when its name ends in .toml, JSON otherwise.
nlohmann::json load_data_file(const std::filesystem::path& path);

}  // namespace hpctrain::jobgen
