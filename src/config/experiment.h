// The experiment file's schema: one struct per TOML section, every key with a
// default (docs/config.md lists them). Values resolve CLI `--set` over file over
// default; the resolved TOML is kept so a run can record exactly what it used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hpctrain::config {

struct JobConfig {
  std::string name;  // default: the experiment file's stem
  std::uint64_t seed = 1234;
  std::string run_dir;  // default: runs/<name>
};

struct DataConfig {
  // Files or directories; "@python-stdlib" names the quickstart corpus, the
  // Python standard library sources (resolved by data::resolve_source).
  std::vector<std::string> sources{"@python-stdlib"};
  std::string glob = "*";  // file-name pattern inside directories
  bool recursive = true;
  std::string format = "auto";        // auto (by extension), text, jsonl
  std::string text_field = "text";    // the JSONL field holding the document
  std::string on_bad_input = "skip";  // skip (and count) or error
  std::int64_t min_document_bytes = 1;
  std::int64_t max_document_bytes = 1 << 20;
  bool deduplicate = true;
  double validation_fraction = 0.05;    // of documents, chosen by content hash
  std::string dir;                      // prepared data set; default: data/<name>
  std::string tokenizer = "train";      // "train" or the path of a SentencePiece .model
  std::string tokenizer_model = "bpe";  // bpe or unigram
  std::int64_t vocab_size = 8192;
  std::int64_t tokenizer_max_lines = 400000;  // lines sampled to train the tokenizer
  std::int64_t threads = 0;                   // 0: every core
  std::int64_t seq_len = 256;
  double mlm_probability = 0.15;     // of non-special tokens
  double mlm_mask_fraction = 0.8;    // of chosen tokens: replaced by the mask token
  double mlm_random_fraction = 0.1;  // ... by a random token; the rest are kept
};

struct Experiment {
  std::string path;  // the experiment file
  JobConfig job;
  DataConfig data;
  std::string resolved_toml;  // every key, after overrides and defaults
};

// Throws ConfigError with file:line:column (or the offending --set) on a TOML
// syntax error, an unknown section or key, a wrong type or an out-of-range value.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace hpctrain::config
