#include "data/document_starts.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>

namespace hpctrain::data {
namespace {

bool blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
}

}  // namespace

bool DocumentStarts::starts_document(std::string_view line) const {
  return std::any_of(prefixes_.begin(), prefixes_.end(),
                     [line](const std::string& prefix) { return line.substr(0, prefix.size()) == prefix; });
}

std::vector<Document> DocumentStarts::split(std::vector<Document> documents) const {
  std::vector<Document> pieces;
  pieces.reserve(documents.size());
  for (auto& doc : documents) {
    const std::string& text = doc.text;
    const auto origin_of = [&](std::size_t line) {
      return line == 1 ? doc.origin : fmt::format("{}:{}", doc.origin, line);
    };
    std::size_t piece_begin = 0;
    std::size_t piece_line = 1;
    std::size_t line_begin = 0;
    std::size_t line_number = 1;
    bool after_blank = true;  // the file's first line counts as following one
    while (line_begin < text.size()) {
      const std::size_t newline = text.find('\n', line_begin);
      const std::size_t line_end = newline == std::string::npos ? text.size() : newline;
      const std::string_view line = std::string_view(text).substr(line_begin, line_end - line_begin);
      if (after_blank && line_begin > piece_begin && starts_document(line)) {
        pieces.push_back({text.substr(piece_begin, line_begin - piece_begin), origin_of(piece_line)});
        piece_begin = line_begin;
        piece_line = line_number;
      }
      after_blank = blank(line);
      line_begin = line_end + 1;
      ++line_number;
    }
    pieces.push_back({text.substr(piece_begin), origin_of(piece_line)});
  }
  return pieces;
}

}  // namespace hpctrain::data
