#include "data/documents.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string_view>

#include "data/data_error.h"
#include "data/utf8.h"

namespace hpctrain::data {
namespace {

constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
constexpr std::size_t kSniffBytes = std::size_t{64} << 10;

// Up to `limit` bytes from the start of the file.
std::string read_prefix(const std::filesystem::path& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open", path.string()));
  std::string out(limit, '\0');
  in.read(out.data(), static_cast<std::streamsize>(limit));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

}  // namespace

void DocumentReader::bad(const std::string& where, const std::string& reason, const std::string& detail) {
  if (data_.on_bad_input == config::BadInput::kError) {
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
  if (file.format == InputFormat::kText) {
    read_text(file, out);
  } else {
    read_jsonl(file, out);
  }
}

// A text file is one document: never read past max_document_bytes (a huge
// file is only sniffed for binary content, then filtered by size).
void DocumentReader::read_text(const SourceFile& file, std::vector<Document>& out) {
  const std::string name = file.path.string();
  const auto max = static_cast<std::uintmax_t>(data_.max_document_bytes);
  std::string content = read_prefix(file.path, file.size > max ? kSniffBytes : static_cast<std::size_t>(max) + 1);
  if (const auto nul = content.find('\0'); nul != std::string::npos) {
    bad(name, "binary file", fmt::format("binary file (NUL byte at offset {})", nul));
    return;
  }
  if (content.size() > max || file.size > max) {
    ++skipped_["above max_document_bytes"];
    return;
  }
  if (const auto at = first_invalid_utf8(content); at != content.size()) {
    const auto line = 1 + std::count(content.begin(), content.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    bad(fmt::format("{}:{}", name, line), "not UTF-8", fmt::format("invalid UTF-8 at byte {}", at));
    return;
  }
  add(std::move(content), name, out);
}

// A JSONL file is read a block at a time, line by line; a line can be no
// longer than a document of max_document_bytes with every byte escaped.
void DocumentReader::read_jsonl(const SourceFile& file, std::vector<Document>& all) {
  const std::string name = file.path.string();
  std::vector<Document> out;  // kept only if the file turns out not to be binary
  const std::size_t max_line =
      static_cast<std::size_t>(std::min<std::int64_t>(data_.max_document_bytes, 1LL << 32)) * 6 + 4096;
  std::ifstream in(file.path, std::ios::binary);
  if (!in) throw DataError(fmt::format("{}: cannot open", name));
  std::string block(kBlockBytes, '\0');
  std::string line;
  std::size_t line_no = 1;
  std::uint64_t offset = 0;
  bool overlong = false;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    const std::string_view chunk(block.data(), got);
    if (const auto nul = chunk.find('\0'); nul != std::string_view::npos) {
      bad(name, "binary file", fmt::format("binary file (NUL byte at offset {})", offset + nul));
      return;
    }
    offset += got;
    std::size_t start = 0;
    while (start < chunk.size()) {
      const auto end = chunk.find('\n', start);
      const auto piece = chunk.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
      if (!overlong) {
        if (line.size() + piece.size() > max_line) {
          overlong = true;
          line.clear();
        } else {
          line.append(piece);
        }
      }
      if (end == std::string_view::npos) break;
      if (overlong) {
        bad(fmt::format("{}:{}", name, line_no), "JSONL line too long",
            fmt::format("a line longer than {} bytes (data.max_document_bytes, JSON-escaped)", max_line));
      } else {
        jsonl_line(line, fmt::format("{}:{}", name, line_no), out);
      }
      line.clear();
      overlong = false;
      ++line_no;
      start = end + 1;
    }
  }
  if (overlong) {
    bad(fmt::format("{}:{}", name, line_no), "JSONL line too long",
        fmt::format("a line longer than {} bytes (data.max_document_bytes, JSON-escaped)", max_line));
  } else if (!line.empty()) {
    jsonl_line(line, fmt::format("{}:{}", name, line_no), out);
  }
  all.insert(all.end(), std::make_move_iterator(out.begin()), std::make_move_iterator(out.end()));
}

void DocumentReader::jsonl_line(std::string_view line, const std::string& where, std::vector<Document>& out) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  if (first_invalid_utf8(line) != line.size()) {
    bad(where, "not UTF-8", "invalid UTF-8");
    return;
  }
  nlohmann::json record;
  try {
    record = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    bad(where, "JSONL line is not JSON", fmt::format("not JSON: {}", e.what()));
    return;
  }
  const auto field = record.is_object() ? record.find(data_.text_field) : record.end();
  if (!record.is_object() || field == record.end() || !field->is_string()) {
    bad(where, "JSONL line without the text field",
        fmt::format("no string field \"{}\" (data.text_field)", data_.text_field));
    return;
  }
  add(field->get<std::string>(), where, out);
}

}  // namespace hpctrain::data
