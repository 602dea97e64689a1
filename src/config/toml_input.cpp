#include "config/toml_input.h"

#include <fmt/format.h>

#include <vector>

#include "config/config_error.h"
#include "support/bounded_file.h"
#include "support/text.h"

namespace hpctrain::config {
namespace {

// One pass over TOML text that tracks where nesting comes from. Outside
// strings and comments: a line starting with '[' is a table header whose
// dotted key sets the table's depth; a key before '=' adds its dots; in a
// value, '[' and '{' nest, and inside an inline table a key's dots nest too.
// Strings ("...", '...', and the triple-quoted multi-line forms) and comments
// are skipped whole. Malformed text only has to end the scan, not be judged:
// the parser reports it.
class DepthScanner {
 public:
  DepthScanner(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

  void run() {
    while (i_ < text_.size()) {
      skip_blank_lines();
      if (i_ >= text_.size()) break;
      if (text_[i_] == '[') {
        header();
      } else {
        key_value();
      }
    }
  }

 private:
  [[nodiscard]] bool at(std::string_view s) const { return text_.compare(i_, s.size(), s) == 0; }

  void skip_blank_lines() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++i_;
      } else if (c == '#') {
        skip_comment();
      } else {
        break;
      }
    }
  }

  void skip_comment() {
    while (i_ < text_.size() && text_[i_] != '\n') ++i_;
  }

  // Past one character outside strings and comments, where TOML allows
  // ASCII only. toml++ 3.3 asks whether such a character is whitespace
  // through a generated table that reaches __builtin_unreachable for most of
  // U+00A1..U+0499 (undefined behaviour, in GCC's builds too), so a stray
  // non-ASCII byte is refused here instead.
  void step() {
    if (static_cast<unsigned char>(text_[i_]) >= 0x80) {
      fail("a non-ASCII character outside a string or comment (TOML allows them only there)");
    }
    ++i_;
  }

  // Past a backslash in a basic string and what it escapes. An escape never
  // starts with a non-ASCII character, and toml++ would ask the same
  // whitespace question of it as above.
  void skip_escape() {
    if (i_ + 1 < text_.size() && static_cast<unsigned char>(text_[i_ + 1]) >= 0x80) {
      ++i_;
      fail("an escape sequence cannot start with a non-ASCII character");
    }
    i_ += 2;
  }

  // At a quote: skips the whole string, whichever of TOML's four kinds.
  void skip_string() {
    const char quote = text_[i_];
    const std::string triple(3, quote);
    if (at(triple)) {
      i_ += 3;
      while (i_ < text_.size() && !at(triple)) {
        if (quote == '"' && text_[i_] == '\\') {
          skip_escape();
        } else {
          ++i_;
        }
      }
      i_ += 3;
      // A multi-line string may end in up to two more quotes ("""a"""" is a"").
      while (i_ < text_.size() && text_[i_] == quote) ++i_;
      return;
    }
    ++i_;
    while (i_ < text_.size() && text_[i_] != quote && text_[i_] != '\n') {
      if (quote == '"' && text_[i_] == '\\') {
        skip_escape();
      } else {
        ++i_;
      }
    }
    ++i_;
  }

  void check(int depth) const {
    if (depth <= kMaxTomlDepth) return;
    fail(fmt::format("tables, keys, arrays and inline tables nest deeper than {}", kMaxTomlDepth));
  }

  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t k = 0; k < i_ && k < text_.size(); ++k) {
      if (text_[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw ConfigError(fmt::format("{}:{}:{}: {}", origin_, line, column, what));
  }

  // toml++ 3.3 (Debian 12) parses a table header's key on the promise that it
  // starts with a key character or a quote: an assertion in debug builds and
  // undefined behaviour (__builtin_assume) in clang's release builds, so
  // `[#`, `[[[` or `[=` must be refused before it sees them. A ']' or the end
  // of the text is its own error, which the parser reports.
  void header_key_start() const {
    if (i_ >= text_.size()) return;
    const char c = text_[i_];
    const bool bare = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (bare || c == '_' || c == '-' || c == '"' || c == '\'' || c == ']') return;
    fail(fmt::format("a table header must start with a key, not '{}'", support::printable(std::string(1, text_[i_]))));
  }

  // [a.b.c] or [[a.b.c]]: the depth of the keys that follow.
  void header() {
    ++i_;
    if (i_ < text_.size() && text_[i_] == '[') ++i_;
    while (i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t')) ++i_;
    header_key_start();
    // The header's table is one deeper than its dots.
    table_depth_ = 1 + key(1, "]\n");
    while (i_ < text_.size() && text_[i_] == ']') ++i_;
    check(table_depth_);
  }

  // Counts the dots of a key up to one of `stops` (a key-value pair's key
  // ends at '=', a table header's at ']'): the tables a dotted key opens (in
  // a pair, its last part names a value, not a table).
  int key(int base, std::string_view stops = "=\n},") {
    int depth = 0;
    bool fresh = true;  // at the start of a key part
    while (i_ < text_.size() && stops.find(text_[i_]) == std::string_view::npos) {
      const char c = text_[i_];
      if ((c == '"' || c == '\'') && fresh) {
        skip_string();
        fresh = false;
        continue;
      }
      if (c == '.') check(base + ++depth);
      fresh = c == '.' || c == ' ' || c == '\t';
      step();
    }
    return depth;
  }

  void key_value() {
    const int depth = table_depth_ + key(table_depth_);
    check(depth);
    if (i_ < text_.size() && text_[i_] == '=') ++i_;
    value(depth);
  }

  struct Open {
    char kind;  // '[' or '{'
    int depth;  // of its contents
  };

  // A value (possibly spanning lines inside arrays) at `base` depth. A quote
  // starts a string, and '[' or '{' an array or inline table, only where a
  // value starts: toml++ reads the rest of a token it cannot type (`09a"b`,
  // `0{a="b`) up to a value terminator (whitespace, ',', ']', '}' or '#'),
  // quotes and opening brackets included, and must not meet a non-ASCII byte
  // there either.
  void value(int base) {
    std::vector<Open> open;
    bool fresh = true;  // where a value may start
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '\n' && open.empty()) return;
      const bool was_fresh = fresh;
      const bool opens = (c == '[' || c == '{') && was_fresh;
      fresh = c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || opens;
      if ((c == '"' || c == '\'') && was_fresh) {
        skip_string();
      } else if (c == '#') {
        skip_comment();
      } else if (opens) {
        const int depth = (open.empty() ? base : open.back().depth) + 1;
        check(depth);
        open.push_back({c, depth});
        ++i_;
        if (c == '{') {
          inline_key(open);
          fresh = true;
        }
      } else if (c == ']' || c == '}') {
        // toml++ 3.3 assumes a value follows '[' or ',' in an array unless
        // ']' does (an assertion; undefined behaviour in clang's builds).
        if (!open.empty() && open.back().kind != (c == ']' ? '[' : '{')) {
          fail(fmt::format("'{}' cannot close '{}'", c, open.back().kind));
        }
        if (!open.empty()) open.pop_back();
        ++i_;
        if (open.empty()) return;
      } else if (c == ',' && !open.empty() && open.back().kind == '{') {
        ++i_;
        inline_key(open);
        fresh = true;
      } else {
        step();
      }
    }
  }

  // Inside an inline table, after '{' or ',': a key, whose dots nest further.
  void inline_key(std::vector<Open>& open) {
    while (i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t')) ++i_;
    open.back().depth += key(open.back().depth);
    check(open.back().depth);
    if (i_ < text_.size() && text_[i_] == '=') ++i_;
  }

  std::string_view text_;
  const std::string& origin_;
  std::size_t i_ = 0;
  int table_depth_ = 0;
};

}  // namespace

void check_toml_limits(std::string_view text, const std::string& origin, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    throw ConfigError(fmt::format("{}: {} bytes of TOML, more than the {} allowed", origin, text.size(), max_bytes));
  }
  if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
    throw ConfigError(fmt::format("{}: a NUL byte at offset {} (not TOML text)", origin, nul));
  }
  DepthScanner(text, origin).run();
}

std::string read_toml_file(const std::filesystem::path& path, std::size_t max_bytes) {
  try {
    return support::read_bounded_file(path, max_bytes, "TOML file");
  } catch (const support::InputError& e) {
    throw ConfigError(e.what());
  }
}

toml::table parse_toml_file(const std::filesystem::path& path, std::size_t max_bytes) {
  return parse_toml_text(read_toml_file(path, max_bytes), path.string(), max_bytes);
}

toml::table parse_toml_text(std::string_view text, const std::string& origin, std::size_t max_bytes) {
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  check_toml_limits(text, origin, max_bytes);
  try {
    return toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source();
    throw ConfigError(fmt::format("{}:{}:{}: {}", origin, where.begin.line, where.begin.column, e.description()));
  }
}

}  // namespace hpctrain::config
