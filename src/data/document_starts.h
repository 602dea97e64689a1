// data.document_starts: a text file cut into several documents, each
// beginning at a line that follows a blank line (or opens the file) and
// starts with one of the given prefixes, e.g. Python's top-level definitions
// "def ", "class ", "async def ", "@". Training joins documents with </s>, so
// the model learns what begins a document, and a prompt, which generation
// starts as a new document (train/generate.h), is read as that beginning:
// `def ` at a prompt's start is then a top-level definition, not a method cut
// out of the middle of a class, which is all a window's first token is
// otherwise. The pieces of a file, joined, are the file: nothing is added or
// dropped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "data/documents.h"

namespace hpctrain::data {

class DocumentStarts {
 public:
  explicit DocumentStarts(std::vector<std::string> prefixes) : prefixes_(std::move(prefixes)) {}

  // Every document cut at its starts, in order; a piece's origin is
  // "path:line" of its first line (the first keeps the document's).
  [[nodiscard]] std::vector<Document> split(std::vector<Document> documents) const;

 private:
  [[nodiscard]] bool starts_document(std::string_view line) const;

  std::vector<std::string> prefixes_;
};

}  // namespace hpctrain::data
