// JSON from elsewhere (a model's config.json, a safetensors header): its
// nesting bounded before it is parsed, so no input makes the parser or the
// document's destructor recurse without end, and every refusal names the
// origin and the byte.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace hpctrain::support {

// Throws InputError "ORIGIN: byte N: nested deeper than MAX_DEPTH" when
// `text` nests arrays and objects (outside strings) deeper than `max_depth`;
// stops scanning there.
void check_json_depth(const std::string& text, const std::string& origin, int max_depth);

// Parses `text`; throws InputError "ORIGIN: byte N: ..." when it is nested
// deeper than `max_depth` arrays and objects or is not JSON.
nlohmann::json parse_json_text(const std::string& text, const std::string& origin, int max_depth);

}  // namespace hpctrain::support
