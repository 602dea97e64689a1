// Fuzz harness: the Mustache renderer on templates, data and partials of
// large shapes. Byte mutations (mustache_fuzz.cpp) rarely grow the inputs
// that make rendering slow or deep: tens of thousands of tags on one line,
// sections or data nested thousands deep, partials that include each other
// several times. Here the input is a short program whose operations build
// such shapes, each a few bytes:
//   0 repeat: one of a list of tags and texts, up to 65,535 times;
//   1 nest: sections (or inverted ones) up to 65,535 deep around some text;
//   2 deep data: a key nested up to 65,535 deep, as JSON or as TOML (dotted
//     keys), ending in false, true, 0, a string or a list;
//   3 wide data: a list of up to 65,535 elements under a key;
//   4 partials: a chain of up to 64 partials, each including the next
//     1 to 4 times, optionally inside a section;
//   5 text: up to 15 bytes of the input, as they are.
// Template and data are each at most 256 KiB. As in mustache_fuzz.cpp, any
// program must render or end in a RenderError, quickly and within bounded
// memory.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobgen/data_file.h"
#include "jobgen/mustache.h"

namespace {

constexpr std::size_t kMaxBytes = std::size_t{256} << 10;

class Program {
 public:
  Program(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  [[nodiscard]] bool done() const { return at_ >= size_; }
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::size_t count() { return (static_cast<std::size_t>(byte()) << 8) | byte(); }
  std::string text() {
    const std::size_t n = byte() % 16;
    std::string s;
    for (std::size_t i = 0; i < n && !done(); ++i) s += static_cast<char>(byte());
    return s;
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

constexpr std::array<const char*, 16> kPieces = {"{{!c}}", "{{a}}",   "{{#a}}",      "{{/a}}",     "{{^a}}", "{{{a}}}",
                                                 "{{&a}}", "{{>p0}}", "{{.}}",       "\n",         " ",      "x",
                                                 "{{",     "}}",      "{{=<% %>=}}", "<%={{ }}=%>"};

void append(std::string& to, const std::string& piece, std::size_t times) {
  for (std::size_t i = 0; i < times && to.size() + piece.size() <= kMaxBytes; ++i) to += piece;
}

struct Shapes {
  std::string template_text;
  std::string json = "{";  // object members so far, without the closing brace
  std::string toml = "#\n";
  bool use_toml = false;
  hpctrain::jobgen::Partials partials;
};

void deep_data(Shapes& s, Program& p) {
  const std::size_t depth = 1 + p.count();
  const std::uint8_t end = p.byte();
  const char* values[] = {"false", "true", "0", "\"v\"", "[1, 2]"};
  const std::string value = values[end % 5];
  if (end & 8U) {
    s.use_toml = true;
    std::string key = "a";
    append(key, ".a", depth - 1);
    s.toml += key + " = " + value + "\n";
  } else {
    std::string nested;
    append(nested, "{\"a\": ", depth - 1);
    nested += value;
    append(nested, "}", depth - 1);
    if (s.json.size() > 1) s.json += ", ";
    s.json += "\"a\": " + nested;
  }
}

void wide_data(Shapes& s, Program& p) {
  const std::size_t n = p.count();
  const std::string key = std::string(1, static_cast<char>('a' + p.byte() % 3));
  std::string list = "[";
  for (std::size_t i = 0; i < n && list.size() < kMaxBytes; ++i) list += i == 0 ? "{\"a\": 1}" : ", {\"a\": 1}";
  list += "]";
  if (s.json.size() > 1) s.json += ", ";
  s.json += "\"" + key + "\": " + list;
}

void partial_chain(Shapes& s, Program& p) {
  const std::size_t length = 1 + p.byte() % 64;
  const std::size_t fan_out = 1 + p.byte() % 4;
  const bool in_section = (p.byte() & 1U) != 0;
  for (std::size_t i = 0; i < length; ++i) {
    std::string body;
    if (in_section) body += "{{#a}}";
    if (i + 1 < length) append(body, "{{>p" + std::to_string(i + 1) + "}}", fan_out);
    body += "x";
    if (in_section) body += "{{/a}}";
    s.partials["p" + std::to_string(i)] = body;
  }
  append(s.template_text, "{{>p0}}", 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Program p(data, size);
  Shapes s;
  while (!p.done()) {
    switch (p.byte() % 6) {
      case 0: {
        const char* piece = kPieces[p.byte() % kPieces.size()];
        append(s.template_text, piece, p.count());
        break;
      }
      case 1: {
        const std::size_t depth = p.count();
        const std::string name = (p.byte() & 1U) != 0 ? "{{^a}}" : "{{#a}}";
        append(s.template_text, name, depth);
        append(s.template_text, "x", 1);
        append(s.template_text, "{{/a}}", depth);
        break;
      }
      case 2: deep_data(s, p); break;
      case 3: wide_data(s, p); break;
      case 4: partial_chain(s, p); break;
      default: append(s.template_text, p.text(), 1); break;
    }
  }
  try {
    const nlohmann::json context = s.use_toml ? hpctrain::jobgen::parse_data(s.toml, "shapes.toml", true)
                                              : hpctrain::jobgen::parse_data(s.json + "}", "shapes.json", false);
    (void)hpctrain::jobgen::render_mustache(s.template_text, context, hpctrain::jobgen::partials_from(s.partials),
                                            hpctrain::jobgen::escape_html, "shapes");
  } catch (const hpctrain::jobgen::RenderError&) {
    // refused, naming the template's line:column or the data's place
  }
  return 0;
}
