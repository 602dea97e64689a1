#include "jobgen/mustache.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "support/text.h"

namespace hpctrain::jobgen {
namespace {

using json = nlohmann::json;

struct Node {
  enum class Kind { kText, kEscaped, kRaw, kSection, kInverted, kPartial } kind = Kind::kText;
  std::string text;         // literal text, a name, or a partial's name
  std::string indentation;  // a standalone partial's
  std::vector<Node> children;
};

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string trim(std::string_view s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && (is_blank(s[b]) || s[b] == '\n' || s[b] == '\r')) ++b;
  while (e > b && (is_blank(s[e - 1]) || s[e - 1] == '\n' || s[e - 1] == '\r')) --e;
  return std::string(s.substr(b, e - b));
}

class Parser {
 public:
  Parser(const std::string& text, std::string origin) : text_(text), origin_(std::move(origin)) {}

  std::vector<Node> parse() {
    std::vector<Node> root;
    std::vector<std::pair<Node, std::size_t>> open;  // sections being read, with where they started
    auto current = [&]() -> std::vector<Node>& { return open.empty() ? root : open.back().first.children; };
    std::size_t pos = 0;
    while (pos < text_.size()) {
      const std::size_t tag = text_.find(open_, pos);
      if (tag == std::string::npos) {
        add_text(current(), text_.substr(pos));
        break;
      }
      std::size_t inner = tag + open_.size();
      std::string closing = close_;
      const bool triple = inner < text_.size() && text_[inner] == '{';
      if (triple) closing = "}" + close_;
      const std::size_t end = text_.find(closing, inner + (triple ? 1 : 0));
      if (end == std::string::npos) throw error(tag, fmt::format("unclosed tag (no {})", closing));
      const std::size_t after = end + closing.size();
      std::string content = text_.substr(inner, end - inner);
      char type = triple ? '{' : (content.empty() ? ' ' : trim(content).empty() ? ' ' : trim(content)[0]);
      if (type != '{' && type != '&' && type != '#' && type != '^' && type != '/' && type != '!' && type != '>' &&
          type != '=') {
        type = ' ';
      }
      std::string name = trim(type == ' ' ? content : type == '{' ? content.substr(1) : trim(content).substr(1));
      if (type == '=') name = trim(content);

      // Standalone: only blanks share the tag's line(s); the whole line goes.
      std::size_t text_end = tag;
      std::size_t next = after;
      std::string indentation;
      if (type == '#' || type == '^' || type == '/' || type == '!' || type == '>' || type == '=') {
        // The line's start, looked for no further back than the previous tag's
        // end (a line that starts before it is not standalone): one scan per
        // tag over text no other tag scans, so parsing stays linear.
        std::size_t start = tag;
        while (start > pos && text_[start - 1] != '\n') --start;
        if (start == pos && pos > 0 && text_[pos - 1] != '\n') start = 0;
        bool blank_before = start >= pos || tag == 0;
        for (std::size_t i = start; i < tag && blank_before; ++i) blank_before = is_blank(text_[i]);
        std::size_t i = after;
        while (i < text_.size() && is_blank(text_[i])) ++i;
        const bool line_ends = i == text_.size() || text_[i] == '\n' || text_.compare(i, 2, "\r\n") == 0;
        if (blank_before && line_ends && start >= pos) {
          text_end = start;
          indentation = text_.substr(start, tag - start);
          next = i == text_.size() ? i : i + (text_[i] == '\n' ? 1 : 2);
        }
      }
      add_text(current(), text_.substr(pos, text_end - pos));
      pos = next;

      switch (type) {
        case '!': break;
        case '=': set_delimiters(name, tag); break;
        case '#':
        case '^': {
          if (open.size() >= static_cast<std::size_t>(kMaxNesting)) {
            throw error(tag, fmt::format("sections nest deeper than {}", kMaxNesting));
          }
          Node section;
          section.kind = type == '#' ? Node::Kind::kSection : Node::Kind::kInverted;
          section.text = name;
          open.emplace_back(std::move(section), tag);
          break;
        }
        case '/': {
          if (open.empty()) throw error(tag, fmt::format("section end {} without a start", name));
          if (open.back().first.text != name) {
            throw error(tag, fmt::format("section end {} closes {}", name, open.back().first.text));
          }
          Node done = std::move(open.back().first);
          open.pop_back();
          current().push_back(std::move(done));
          break;
        }
        case '>': current().push_back({Node::Kind::kPartial, name, indentation, {}}); break;
        case '{':
        case '&': current().push_back({Node::Kind::kRaw, name, {}, {}}); break;
        default: current().push_back({Node::Kind::kEscaped, name, {}, {}}); break;
      }
    }
    if (!open.empty())
      throw error(open.back().second, fmt::format("section {} is never closed", open.back().first.text));
    return root;
  }

 private:
  static void add_text(std::vector<Node>& into, std::string text) {
    if (!text.empty()) into.push_back({Node::Kind::kText, std::move(text), {}, {}});
  }

  void set_delimiters(const std::string& spec, std::size_t at) {
    // "=<open> <close>="
    if (spec.size() < 2 || spec.back() != '=') throw error(at, "a delimiter change must end with =");
    const std::string inner = trim(spec.substr(1, spec.size() - 2));
    const std::size_t space = inner.find_first_of(" \t");
    if (space == std::string::npos) throw error(at, "a delimiter change needs two delimiters");
    open_ = inner.substr(0, space);
    close_ = trim(inner.substr(space));
    if (open_.empty() || close_.empty() || close_.find_first_of(" \t=") != std::string::npos) {
      throw error(at, "bad delimiters");
    }
  }

  RenderError error(std::size_t at, const std::string& what) const {
    const support::LineColumn where = support::line_column(text_, at);
    return RenderError(fmt::format("{}:{}:{}: {}", origin_, where.line, where.column, what));
  }

  const std::string& text_;
  std::string origin_;
  std::string open_ = "{{";
  std::string close_ = "}}";
};

class Renderer {
 public:
  Renderer(const PartialSource& partials, const Escape& escape, std::string origin)
      : partials_(partials), escape_(escape), origin_(std::move(origin)) {}

  void render(const std::vector<Node>& nodes, std::vector<const json*>& stack, std::string& out, int depth) {
    if (depth > kMaxNesting) {
      throw RenderError(fmt::format("{}: sections and partials nest deeper than {}", origin_, kMaxNesting));
    }
    for (const Node& node : nodes) {
      charge(1);
      switch (node.kind) {
        case Node::Kind::kText: out += node.text; break;
        case Node::Kind::kEscaped: out += escape_(to_text(lookup(node.text, stack))); break;
        case Node::Kind::kRaw: out += to_text(lookup(node.text, stack)); break;
        case Node::Kind::kSection: {
          const json* value = lookup(node.text, stack);
          if (!truthy(value)) break;
          if (value->is_array()) {
            for (const auto& item : *value) {
              stack.push_back(&item);
              render(node.children, stack, out, depth + 1);
              stack.pop_back();
            }
          } else {
            stack.push_back(value);
            render(node.children, stack, out, depth + 1);
            stack.pop_back();
          }
          break;
        }
        case Node::Kind::kInverted:
          if (!truthy(lookup(node.text, stack))) render(node.children, stack, out, depth + 1);
          break;
        case Node::Kind::kPartial: render(partial(node), stack, out, depth + 1); break;
      }
      if (out.size() > kMaxOutputBytes) {
        throw RenderError(fmt::format("{}: the output grows past {} MiB", origin_, kMaxOutputBytes >> 20));
      }
    }
  }

 private:
  // A partial parsed once per name and indentation, however often it is
  // included. Each partial tag remembers what it resolved to, so a tag
  // rendered millions of times (partials that include others twice, up to the
  // step budget) costs a pointer lookup rather than copying its name and
  // indentation into a key and searching by them: the step budget then bounds
  // the time, not only the work.
  const std::vector<Node>& partial(const Node& node) {
    if (const auto it = by_tag_.find(&node); it != by_tag_.end()) return *it->second;
    const auto key = std::make_pair(node.text, node.indentation);
    auto found = parsed_.find(key);
    if (found == parsed_.end()) {
      if (!texts_.count(node.text)) texts_[node.text] = partials_ ? partials_(node.text) : std::nullopt;
      const auto& text = texts_[node.text];
      std::vector<Node> nodes;
      if (text) nodes = Parser(indent(*text, node.indentation), origin_ + " (partial " + node.text + ")").parse();
      found = parsed_.emplace(key, std::move(nodes)).first;
    }
    // std::map never moves its elements, so the tag and its nodes stay put.
    by_tag_.emplace(&node, &found->second);
    return found->second;
  }

  static std::string indent(const std::string& text, const std::string& by) {
    if (by.empty()) return text;
    std::string out = by;
    for (std::size_t i = 0; i < text.size(); ++i) {
      out += text[i];
      if (text[i] == '\n' && i + 1 < text.size()) out += by;
    }
    return out;
  }

  static bool truthy(const json* value) {
    return value != nullptr && !value->is_null() && !(value->is_boolean() && !value->get<bool>()) &&
           !(value->is_array() && value->empty());
  }

  static std::string to_text(const json* value) {
    if (value == nullptr || value->is_null()) return {};
    if (value->is_string()) return value->get<std::string>();
    return value->dump();
  }

  // A step is a node rendered or a context a name lookup looks into: a name
  // inside sections nested d deep over a list of n items walks up to d
  // contexts n * d times, so counting nodes alone would not bound the work.
  void charge(std::size_t steps) {
    steps_ += steps;
    if (steps_ > kMaxRenderSteps) {
      throw RenderError(fmt::format(
          "{}: rendering takes more than {} steps (sections over large data, or partials that include others "
          "several times)",
          origin_, kMaxRenderSteps));
    }
  }

  // Dotted names: the first part is found by walking the context stack down;
  // the rest only inside what it found.
  const json* lookup(const std::string& name, const std::vector<const json*>& stack) {
    if (name == ".") return stack.back();
    std::vector<std::string> parts;
    for (std::size_t start = 0;;) {
      const std::size_t dot = name.find('.', start);
      parts.push_back(name.substr(start, dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    const json* found = nullptr;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      charge(1);
      if ((*it)->is_object() && (*it)->contains(parts[0])) {
        found = &(**it)[parts[0]];
        break;
      }
    }
    for (std::size_t i = 1; found != nullptr && i < parts.size(); ++i) {
      found = found->is_object() && found->contains(parts[i]) ? &(*found)[parts[i]] : nullptr;
    }
    return found;
  }

  const PartialSource& partials_;
  const Escape& escape_;
  std::string origin_;
  std::size_t steps_ = 0;
  std::map<std::string, std::optional<std::string>> texts_;
  std::map<std::pair<std::string, std::string>, std::vector<Node>> parsed_;
  std::unordered_map<const Node*, const std::vector<Node>*> by_tag_;
};

}  // namespace

std::string escape_html(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

PartialSource partials_from(const Partials& partials) {
  return [partials](const std::string& name) -> std::optional<std::string> {
    const auto it = partials.find(name);
    if (it == partials.end()) return std::nullopt;
    return it->second;
  };
}

std::string render_mustache(const std::string& template_text, const nlohmann::json& data, const PartialSource& partials,
                            const Escape& escape, const std::string& origin) {
  const std::vector<Node> nodes = Parser(template_text, origin).parse();
  std::vector<const json*> stack{&data};
  std::string out;
  Renderer(partials, escape, origin).render(nodes, stack, out, 0);
  return out;
}

}  // namespace hpctrain::jobgen
