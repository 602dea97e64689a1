#include "config/data_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

namespace {

// Token files and text corpora split differently: text by a content hash of
// each document (the fractions), token files by the files named for each split.
void check_token_files(const DataConfig& d, const SectionReader& section) {
  if (d.token_files()) {
    if (d.validation_sources.empty()) {
      throw ConfigError(fmt::format(
          "{}: data.format = \"{}\" reads token files, which hold no documents to split: name the validation "
          "split's files in data.validation_sources (llm.c writes *_val_*.bin, nanoGPT val.bin)",
          section.origins({{"data", "format"}}), name_of(d.format)));
    }
    if (d.test_fraction > 0) {
      throw ConfigError(
          fmt::format("{}: data.test_fraction splits documents, which token files do not have: name the "
                      "test split's files in data.test_sources instead",
                      section.origins({{"data", "test_fraction"}, {"data", "format"}})));
    }
    return;
  }
  if (!d.validation_sources.empty() || !d.test_sources.empty()) {
    throw ConfigError(fmt::format(
        "{}: data.validation_sources and data.test_sources name the splits of token files (data.format = \"llmc\", "
        "\"uint16\" or \"uint32\"); a text corpus is split by data.validation_fraction and data.test_fraction",
        section.origins({{"data", "validation_sources"}, {"data", "test_sources"}, {"data", "format"}})));
  }
}

// Prefixes of lines, for text: token files have no lines to cut at.
void check_document_starts(const DataConfig& d, const SectionReader& section) {
  if (d.document_starts.empty()) return;
  if (d.token_files()) {
    throw ConfigError(
        fmt::format("{}: data.document_starts cuts text at lines; data.format = \"{}\" reads token "
                    "files, which have none",
                    section.origins({{"data", "document_starts"}, {"data", "format"}}), name_of(d.format)));
  }
  for (const auto& prefix : d.document_starts) {
    if (prefix.empty() || prefix.find('\n') != std::string::npos) {
      throw ConfigError(
          fmt::format("{}: data.document_starts holds an empty prefix or one with a line break: each is "
                      "how a line that begins a document starts (\"def \", \"class \")",
                      section.origins({{"data", "document_starts"}})));
    }
  }
}

}  // namespace

DataConfig DataConfig::read(SectionReader section, const JobConfig& job) {
  DataConfig d;
  d.sources = section.strings("sources", d.sources);
  d.glob = section.string("glob", d.glob);
  d.exclude = section.strings("exclude", d.exclude);
  d.recursive = section.boolean("recursive", d.recursive);
  d.format = section.choice("format", d.format);
  d.text_field = section.string("text_field", d.text_field);
  d.on_bad_input = section.choice("on_bad_input", d.on_bad_input);
  d.min_document_bytes = section.integer("min_document_bytes", d.min_document_bytes, 0, kNoLimit);
  d.max_document_bytes = section.integer("max_document_bytes", d.max_document_bytes, 1, kNoLimit);
  d.document_starts = section.strings("document_starts", d.document_starts);
  d.deduplicate = section.boolean("deduplicate", d.deduplicate);
  d.validation_fraction = section.number("validation_fraction", d.validation_fraction, 0.0, 0.5);
  d.test_fraction = section.number("test_fraction", d.test_fraction, 0.0, 0.5);
  d.validation_sources = section.strings("validation_sources", d.validation_sources);
  d.test_sources = section.strings("test_sources", d.test_sources);
  d.dir = section.string("dir", "data/" + job.name);
  if (d.dir.empty()) throw ConfigError(fmt::format("{}: data.dir is empty", section.origins({{"data", "dir"}})));
  d.tokenizer = section.string("tokenizer", d.tokenizer);
  d.tokenizer_model = section.choice("tokenizer_model", d.tokenizer_model);
  d.vocab_size = section.integer("vocab_size", d.vocab_size, 300, 1 << 20);
  d.tokenizer_max_lines = section.integer("tokenizer_max_lines", d.tokenizer_max_lines, 1000, kNoLimit);
  d.threads = section.integer("threads", d.threads, 0, 1024);
  d.seq_len = section.integer("seq_len", d.seq_len, 1, 1 << 20);
  d.mlm_probability = section.number("mlm_probability", d.mlm_probability, 0.0, 1.0);
  d.mlm_mask_fraction = section.number("mlm_mask_fraction", d.mlm_mask_fraction, 0.0, 1.0);
  d.mlm_random_fraction = section.number("mlm_random_fraction", d.mlm_random_fraction, 0.0, 1.0);
  section.finish();
  if (d.mlm_mask_fraction + d.mlm_random_fraction > 1.0) {
    throw ConfigError(fmt::format("{}: data.mlm_mask_fraction + data.mlm_random_fraction = {} exceeds 1",
                                  section.origins({{"data", "mlm_mask_fraction"}, {"data", "mlm_random_fraction"}}),
                                  d.mlm_mask_fraction + d.mlm_random_fraction));
  }
  if (d.validation_fraction + d.test_fraction >= 1.0) {
    throw ConfigError(fmt::format("{}: data.validation_fraction + data.test_fraction = {} leaves no training split",
                                  section.origins({{"data", "validation_fraction"}, {"data", "test_fraction"}}),
                                  d.validation_fraction + d.test_fraction));
  }
  check_token_files(d, section);
  check_document_starts(d, section);
  if (d.min_document_bytes > d.max_document_bytes) {
    throw ConfigError(fmt::format("{}: data.min_document_bytes {} exceeds data.max_document_bytes {}",
                                  section.origins({{"data", "min_document_bytes"}, {"data", "max_document_bytes"}}),
                                  d.min_document_bytes, d.max_document_bytes));
  }
  return d;
}

}  // namespace hpctrain::config
