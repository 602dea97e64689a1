// A Mustache renderer that follows the specification
// (https://github.com/mustache/spec: interpolation, sections, inverted
// sections, comments, partials with standalone indentation, set delimiters;
// no lambdas). Debian's kainjow mustache 4.1 was tried first: it fails 26 of
// the specification's 136 cases (standalone lines around comments, delimiter
// changes and partials; implicit iterators at the root; dotted-name
// precedence), and batch scripts depend on exact whitespace, so jobgen renders
// with this instead. Data is JSON; what `{{x}}` does to a value is the
// caller's Escape (HTML for the specification, context encoders for batch
// scripts, see encoding.h).
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace hpctrain::jobgen {

class RenderError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using Escape = std::function<std::string(const std::string&)>;
using Partials = std::map<std::string, std::string>;
// A partial's text by name, or nullopt when there is none (it renders empty).
using PartialSource = std::function<std::optional<std::string>(const std::string& name)>;

// The partials of a map.
PartialSource partials_from(const Partials& partials);

// HTML escaping as the specification defines it (& " < >).
std::string escape_html(const std::string& value);

// Throws RenderError with ORIGIN:line:column for an unclosed tag or section, a
// mismatched section end, or a bad delimiter change. Rendering is bounded, since
// templates and data may come from anyone: sections and partials nest at most
// kMaxNesting deep, the output is at most kMaxOutputBytes, and rendering takes
// at most kMaxRenderSteps steps, a step being a node rendered or a context a
// name lookup looks into (sections over large data, or partials that include
// others several times, multiply the work exponentially).
constexpr int kMaxNesting = 100;
constexpr std::size_t kMaxOutputBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxRenderSteps = std::size_t{4} << 20;  // a 100,000-point sweep takes ~700,000
std::string render_mustache(const std::string& template_text, const nlohmann::json& data, const PartialSource& partials,
                            const Escape& escape, const std::string& origin);

}  // namespace hpctrain::jobgen
