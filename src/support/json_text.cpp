#include "support/json_text.h"

#include <fmt/format.h>

#include "support/bounded_file.h"

namespace hpctrain::support {
void check_json_depth(const std::string& text, const std::string& origin, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        throw InputError(fmt::format("{}: byte {}: nested deeper than {}", origin, i, max_depth));
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

nlohmann::json parse_json_text(const std::string& text, const std::string& origin, int max_depth) {
  check_json_depth(text, origin, max_depth);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(fmt::format("{}: byte {}: not JSON: {}", origin, e.byte, e.what()));
  } catch (const nlohmann::json::exception& e) {
    // Not a syntax error: a number beyond double's range (out_of_range.406).
    throw InputError(fmt::format("{}: {}", origin, e.what()));
  }
}

}  // namespace hpctrain::support
