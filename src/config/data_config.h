// [data]: the corpus or token files, how they are split and tokenized, and
// the MLM masking (docs/config.md, docs/data.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/choices.h"
#include "config/job_config.h"

namespace hpctrain::config {

class SectionReader;

// auto: text or JSONL by file extension. The token formats are files another
// tool tokenized: llm.c's .bin (a 256 x int32 header, then uint16 or uint32
// tokens) and headerless little-endian uint16 / uint32 (nanoGPT's train.bin).
enum class DataFormat { kAuto, kText, kJsonl, kLlmc, kUint16, kUint32 };
enum class BadInput { kSkip, kError };
enum class TokenizerKind { kBpe, kUnigram };

template <>
struct ChoiceTable<DataFormat> {
  static constexpr std::array<Choice<DataFormat>, 6> entries{{{"auto", DataFormat::kAuto},
                                                              {"text", DataFormat::kText},
                                                              {"jsonl", DataFormat::kJsonl},
                                                              {"llmc", DataFormat::kLlmc},
                                                              {"uint16", DataFormat::kUint16},
                                                              {"uint32", DataFormat::kUint32}}};
};
template <>
struct ChoiceTable<BadInput> {
  static constexpr std::array<Choice<BadInput>, 2> entries{{{"skip", BadInput::kSkip}, {"error", BadInput::kError}}};
};
template <>
struct ChoiceTable<TokenizerKind> {
  static constexpr std::array<Choice<TokenizerKind>, 2> entries{
      {{"bpe", TokenizerKind::kBpe}, {"unigram", TokenizerKind::kUnigram}}};
};

struct DataConfig {
  // Files or directories; "@python-stdlib" names the quickstart corpus, the
  // Python standard library sources (resolved by data::resolve_source).
  std::vector<std::string> sources{"@python-stdlib"};
  std::string glob = "*";  // file-name pattern inside directories
  // Patterns (fnmatch) of paths inside a source directory, relative to it, left out.
  std::vector<std::string> exclude;
  bool recursive = true;
  DataFormat format = DataFormat::kAuto;
  std::string text_field = "text";          // the JSONL field holding the document
  BadInput on_bad_input = BadInput::kSkip;  // skip (and count) or error
  std::int64_t min_document_bytes = 1;
  std::int64_t max_document_bytes = 1 << 20;
  // A text file is cut into several documents, each beginning at a line that
  // follows a blank line and starts with one of these prefixes
  // (data/document_starts.h); none: a file is one document.
  std::vector<std::string> document_starts;
  bool deduplicate = true;
  double validation_fraction = 0.05;  // of documents, chosen by content hash
  double test_fraction = 0.0;         // of documents, a third split no run reads before its very end
  // Token files carry no documents to split by: their validation (and test)
  // splits are files of their own, named here like `sources`.
  std::vector<std::string> validation_sources;
  std::vector<std::string> test_sources;
  std::string dir;                  // prepared data set; default: data/<name>
  std::string tokenizer = "train";  // "train" or the path of a SentencePiece .model
  TokenizerKind tokenizer_model = TokenizerKind::kBpe;
  std::int64_t vocab_size = 8192;
  std::int64_t tokenizer_max_lines = 400000;  // lines sampled to train the tokenizer
  std::int64_t threads = 0;                   // 0: every core
  std::int64_t seq_len = 256;
  double mlm_probability = 0.15;     // of non-special tokens
  double mlm_mask_fraction = 0.8;    // of chosen tokens: replaced by the mask token
  double mlm_random_fraction = 0.1;  // ... by a random token; the rest are kept

  [[nodiscard]] bool token_files() const {
    return format == DataFormat::kLlmc || format == DataFormat::kUint16 || format == DataFormat::kUint32;
  }
  // Token files have a tokenizer only when data.tokenizer names the one they came from.
  [[nodiscard]] bool trains_tokenizer() const { return tokenizer == "train" && !token_files(); }
  [[nodiscard]] bool has_tokenizer() const { return !token_files() || tokenizer != "train"; }
  [[nodiscard]] bool has_test_split() const { return test_fraction > 0 || !test_sources.empty(); }

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static DataConfig read(SectionReader section, const JobConfig& job);
};

}  // namespace hpctrain::config
