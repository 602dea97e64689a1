// Reading input files into documents, with the bad-input policy of
// data.on_bad_input (docs/data.md):
//   skip  — a bad file or line is left out and counted by reason;
//   error — the first one stops preparation, naming the file (and line).
// Bad means: a binary file (a NUL byte), text that is not valid UTF-8, a JSONL
// line that is not a JSON object, or one without the text field as a string.
// Documents outside [min_document_bytes, max_document_bytes] are filtered
// (counted) under either policy: that is a size filter, not bad input.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "config/experiment.h"
#include "data/sources.h"

namespace hpctrain::data {

struct Document {
  std::string text;
  std::string origin;  // "path" or "path:line"
};

class DocumentReader {
 public:
  explicit DocumentReader(const config::DataConfig& data) : data_(data) {}

  void read(const SourceFile& file, std::vector<Document>& out);

  // Reason -> count of files or lines left out.
  [[nodiscard]] const std::map<std::string, std::size_t>& skipped() const { return skipped_; }

 private:
  void bad(const std::string& where, const std::string& reason, const std::string& detail);
  void add(std::string text, std::string origin, std::vector<Document>& out);
  void read_text(const SourceFile& file, std::vector<Document>& out);
  void read_jsonl(const SourceFile& file, std::vector<Document>& all);
  void jsonl_line(std::string_view line, const std::string& where, std::vector<Document>& out);

  const config::DataConfig& data_;
  std::map<std::string, std::size_t> skipped_;
};

}  // namespace hpctrain::data
