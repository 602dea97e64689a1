// Template data for `jobgen render --data FILE`: a JSON file, or a TOML file
// turned into the same JSON shape (tables are objects, arrays are lists, dates
// and times their TOML text).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace hpctrain::jobgen {

// A whole file (a template, a partial); throws RenderError naming it.
std::string read_text_file(const std::filesystem::path& path);

// Throws RenderError with file:line:column on a parse error.
nlohmann::json load_data_file(const std::filesystem::path& path);

}  // namespace hpctrain::jobgen
