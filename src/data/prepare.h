// `hpctrain prepare`: corpus -> documents -> exact-duplicate removal ->
// train/validation(/test) split by document -> tokenizer -> packed token shards, with
// statistics. Deterministic, and idempotent: a data set whose fingerprint (the
// data config and the input files' names, sizes and modification times) matches
// is reused. Built in a temporary directory renamed into place at the end, so an
// interrupted run never leaves a data set that looks complete.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "config/experiment.h"

namespace hpctrain::data {

struct PrepareStats {
  std::uint64_t files = 0;
  std::uint64_t documents = 0;  // kept, both splits
  std::uint64_t duplicates_removed = 0;
  std::map<std::string, std::uint64_t> skipped;  // reason -> count
  std::uint64_t characters = 0;                  // Unicode code points
  std::uint64_t bytes = 0;
  std::uint64_t tokens = 0;  // both splits, with separators
  double characters_per_token = 0;
  // How well the tokenizer fits the corpus, on a sample of whitespace-separated words:
  double subword_fertility = 0;     // tokens per word
  double continued_words = 0;       // share of words split into 2+ tokens
  double unknown_or_byte_rate = 0;  // share of all tokens that are <unk> or byte fallback
  // The entropy (nats) of the training tokens' unigram distribution: the loss of
  // a model that ignores context. A language model must get well below it.
  double unigram_entropy = 0;
  std::uint64_t train_tokens = 0;
  std::uint64_t validation_tokens = 0;
  std::uint64_t test_tokens = 0;  // 0 without a test split (data.test_fraction = 0)
  // Imported from token files: no documents, characters or tokenizer statistics.
  bool token_files = false;
};

struct PrepareResult {
  std::filesystem::path dir;
  bool reused = false;
  std::string fingerprint;
  std::string tokenizer_hash;
  PrepareStats stats;
};

PrepareResult prepare(const config::Experiment& experiment, std::FILE* log);

// The fingerprint prepare gives the data set `experiment` describes, from its
// [data] settings and the sources as they are now; throws DataError when the
// sources cannot be read.
std::string expected_fingerprint(const config::Experiment& experiment);
// The fingerprint in DIR/meta.json; "" when it holds none or is no JSON.
// Throws support::InputError when meta.json is no regular file or too large.
std::string stored_fingerprint(const std::filesystem::path& dir);

// Prints the statistics table.
void print_stats(const PrepareResult& result, std::FILE* out);
// One line of them, for a training log: documents, tokens per split, characters per token.
std::string summary_line(const PrepareResult& result);

}  // namespace hpctrain::data
