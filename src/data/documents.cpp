#include "data/documents.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "data/data_error.h"
#include "data/utf8.h"

namespace hpctrain::data {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open", path.string()));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace

void DocumentReader::bad(const std::string& where, const std::string& reason, const std::string& detail) {
  if (data_.on_bad_input == "error") {
    throw DataError(
        fmt::format("{}: {} (data.on_bad_input = \"error\"; \"skip\" leaves such input out)", where, detail));
  }
  ++skipped_[reason];
}

void DocumentReader::add(std::string text, std::string origin, std::vector<Document>& out) {
  const auto bytes = static_cast<std::int64_t>(text.size());
  if (bytes < data_.min_document_bytes) {
    ++skipped_["below min_document_bytes"];
  } else if (bytes > data_.max_document_bytes) {
    ++skipped_["above max_document_bytes"];
  } else {
    out.push_back({std::move(text), std::move(origin)});
  }
}

void DocumentReader::read(const SourceFile& file, std::vector<Document>& out) {
  const std::string name = file.path.string();
  std::string content = read_file(file.path);
  if (content.find('\0') != std::string::npos) {
    bad(name, "binary file", fmt::format("binary file (NUL byte at offset {})", content.find('\0')));
    return;
  }
  if (file.format == InputFormat::kText) {
    if (const auto at = first_invalid_utf8(content); at != content.size()) {
      const auto line = 1 + std::count(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(at), '\n');
      bad(fmt::format("{}:{}", name, line), "not UTF-8", fmt::format("invalid UTF-8 at byte {}", at));
      return;
    }
    add(std::move(content), name, out);
    return;
  }

  std::size_t line_no = 0;
  std::size_t start = 0;
  while (start < content.size()) {
    auto end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    const std::string_view line(content.data() + start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", name, line_no);
    if (first_invalid_utf8(line) != line.size()) {
      bad(where, "not UTF-8", "invalid UTF-8");
      continue;
    }
    nlohmann::json record;
    try {
      record = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      bad(where, "JSONL line is not JSON", fmt::format("not JSON: {}", e.what()));
      continue;
    }
    const auto field = record.is_object() ? record.find(data_.text_field) : record.end();
    if (!record.is_object() || field == record.end() || !field->is_string()) {
      bad(where, "JSONL line without the text field",
          fmt::format("no string field \"{}\" (data.text_field)", data_.text_field));
      continue;
    }
    add(field->get<std::string>(), where, out);
  }
}

}  // namespace hpctrain::data
