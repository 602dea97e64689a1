// TOML from outside (experiments, --set values, cluster profiles, template
// data, the config stored in a checkpoint), parsed only after its size and
// nesting depth are bounded: toml++ builds and tears down nested tables
// recursively, so a file of ~50,000 nested tables (`[a.a.a...]`) overflows the
// stack inside the parser. The depth is counted by a scanner that knows TOML's
// strings and comments and counts table headers' keys, dotted keys, arrays
// and inline tables together; it never counts less than the parser will
// nest. Errors are ConfigErrors naming ORIGIN:line:column.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <toml++/toml.h>

namespace hpctrain::config {

constexpr std::size_t kMaxTomlBytes = std::size_t{1} << 20;  // an experiment is a few kB
constexpr int kMaxTomlDepth = 32;                            // hpctrain's own files nest 3 deep

// The UTF-8 byte-order mark Windows editors put at the start of a file; TOML
// (and toml++) accept one there and nowhere else. parse_toml_text drops it
// before parsing, so line 1's columns count from the first character after
// it, as editors show.
constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

// Throws ConfigError when `text` is longer than `max_bytes` or nests deeper
// than kMaxTomlDepth, or holds a NUL byte.
void check_toml_limits(std::string_view text, const std::string& origin, std::size_t max_bytes = kMaxTomlBytes);

// The text of a regular file of at most `max_bytes` (ConfigError otherwise).
std::string read_toml_file(const std::filesystem::path& path, std::size_t max_bytes = kMaxTomlBytes);
// Reads a regular file of at most `max_bytes`, checks it and parses it.
toml::table parse_toml_file(const std::filesystem::path& path, std::size_t max_bytes = kMaxTomlBytes);
// Checks and parses text; ORIGIN names it in errors ("--set a.b=c", "file (stored config)").
toml::table parse_toml_text(std::string_view text, const std::string& origin, std::size_t max_bytes = kMaxTomlBytes);

}  // namespace hpctrain::config
