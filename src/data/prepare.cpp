#include "data/prepare.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_set>

#include "data/data_error.h"
#include "data/data_set_dir.h"
#include "data/document_starts.h"
#include "data/documents.h"
#include "data/parallel_encode.h"
#include "data/sources.h"
#include "data/token_files.h"
#include "data/token_shards.h"
#include "data/tokenizer.h"
#include "support/bounded_file.h"
#include "support/progress.h"
#include "support/sha256.h"
#include "support/usable_cores.h"

namespace hpctrain::data {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kTokensPerShard = std::uint64_t{1} << 28;
constexpr std::size_t kMetricWords = 200000;

std::string fingerprint_of(const config::DataConfig& d, const std::vector<SourceFile>& files,
                           const std::string& tokenizer_hash) {
  nlohmann::json j;
  j["format_version"] = kDataFormatVersion;
  j["sources"] = d.sources;
  j["glob"] = d.glob;
  j["recursive"] = d.recursive;
  j["format"] = config::name_of(d.format);
  j["text_field"] = d.text_field;
  j["on_bad_input"] = config::name_of(d.on_bad_input);
  j["document_bytes"] = {d.min_document_bytes, d.max_document_bytes};
  j["deduplicate"] = d.deduplicate;
  j["validation_fraction"] = d.validation_fraction;
  // Only when asked for: data sets prepared before the test split keep their fingerprint.
  if (d.test_fraction > 0) j["test_fraction"] = d.test_fraction;
  // Keys added later enter only when set, so older data sets keep their fingerprint.
  if (!d.exclude.empty()) j["exclude"] = d.exclude;
  if (!d.document_starts.empty()) j["document_starts"] = d.document_starts;
  if (d.token_files()) j["split_sources"] = {d.validation_sources, d.test_sources};
  j["tokenizer"] = {d.tokenizer, config::name_of(d.tokenizer_model), d.vocab_size, d.tokenizer_max_lines,
                    tokenizer_hash};
  auto& inputs = j["inputs"];
  for (const auto& f : files) inputs.push_back({f.path.string(), f.size, f.mtime_ns});
  return support::to_hex(support::sha256(j.dump()));
}

std::uint64_t code_points(const std::string& s) {
  return static_cast<std::uint64_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U; }));
}

void tokenizer_metrics(const Tokenizer& tokenizer, const std::vector<Document>& docs, PrepareStats& stats) {
  std::size_t words = 0;
  std::size_t pieces = 0;
  std::size_t continued = 0;
  for (const auto& d : docs) {
    std::size_t start = 0;
    const std::string& t = d.text;
    while (words < kMetricWords && start < t.size()) {
      start = t.find_first_not_of(" \t\r\n", start);
      if (start == std::string::npos) break;
      auto end = t.find_first_of(" \t\r\n", start);
      if (end == std::string::npos) end = t.size();
      const std::size_t n = tokenizer.encode(std::string_view(t).substr(start, end - start)).size();
      ++words;
      pieces += n;
      continued += n >= 2 ? 1 : 0;
      start = end;
    }
    if (words >= kMetricWords) break;
  }
  stats.subword_fertility = words != 0 ? static_cast<double>(pieces) / static_cast<double>(words) : 0;
  stats.continued_words = words != 0 ? static_cast<double>(continued) / static_cast<double>(words) : 0;
}

nlohmann::json stats_json(const PrepareStats& s) {
  return {{"files", s.files},
          {"documents", s.documents},
          {"duplicates_removed", s.duplicates_removed},
          {"skipped", s.skipped},
          {"characters", s.characters},
          {"bytes", s.bytes},
          {"tokens", s.tokens},
          {"characters_per_token", s.characters_per_token},
          {"subword_fertility", s.subword_fertility},
          {"continued_words", s.continued_words},
          {"unknown_or_byte_rate", s.unknown_or_byte_rate},
          {"unigram_entropy", s.unigram_entropy},
          {"train_tokens", s.train_tokens},
          {"validation_tokens", s.validation_tokens},
          {"test_tokens", s.test_tokens},
          {"token_files", s.token_files}};
}

PrepareStats stats_from_json(const nlohmann::json& j) {
  PrepareStats s;
  s.files = j.at("files");
  s.documents = j.at("documents");
  s.duplicates_removed = j.at("duplicates_removed");
  s.skipped = j.at("skipped").get<std::map<std::string, std::uint64_t>>();
  s.characters = j.at("characters");
  s.bytes = j.at("bytes");
  s.tokens = j.at("tokens");
  s.characters_per_token = j.at("characters_per_token");
  s.subword_fertility = j.at("subword_fertility");
  s.continued_words = j.at("continued_words");
  s.unknown_or_byte_rate = j.at("unknown_or_byte_rate");
  s.unigram_entropy = j.value("unigram_entropy", 0.0);
  s.train_tokens = j.at("train_tokens");
  s.validation_tokens = j.at("validation_tokens");
  s.test_tokens = j.value("test_tokens", std::uint64_t{0});
  s.token_files = j.value("token_files", false);
  return s;
}

nlohmann::json split_json(const SplitInfo& s) {
  nlohmann::json shards = nlohmann::json::array();
  for (const auto& sh : s.shards) shards.push_back({{"file", sh.file}, {"tokens", sh.tokens}});
  return {{"documents", s.documents}, {"tokens", s.tokens}, {"shards", shards}};
}

// A split the experiment asks for must hold a whole sequence, as the data set
// reader cuts them (data.seq_len + 1 tokens within one shard): an empty one
// would score a loss of 0 over 0 tokens, perplexity 1, at every evaluation.
void require_whole_sequence(const SplitInfo& info, const std::string& split, const config::Experiment& experiment,
                            const std::string& because) {
  const auto seq_len = static_cast<std::uint64_t>(experiment.data.seq_len);
  for (const ShardInfo& shard : info.shards) {
    if (shard.tokens > seq_len) return;
  }
  throw DataError(fmt::format(
      "{}: the {} split ({}) holds {} tokens in {} document{}, not one whole sequence of "
      "data.seq_len + 1 = {} tokens: give it more text, or a shorter data.seq_len",
      experiment.path, split, because, info.tokens, info.documents, info.documents == 1 ? "" : "s", seq_len + 1));
}

// meta.json: what a data set holds and how it was made. `eos_id` only where
// documents are joined by </s> (text); token files carry no documents.
nlohmann::json meta_json(const PrepareResult& result, std::int64_t vocab_size, int token_bytes, nlohmann::json splits,
                         const std::string& experiment, nlohmann::json sources, std::optional<int> eos_id) {
  nlohmann::json meta = {{"format_version", kDataFormatVersion},
                         {"fingerprint", result.fingerprint},
                         {"tokenizer_hash", result.tokenizer_hash},
                         {"vocab_size", vocab_size},
                         {"token_bytes", token_bytes},
                         {"splits", std::move(splits)},
                         {"stats", stats_json(result.stats)},
                         {"experiment", experiment},
                         {"sources", std::move(sources)}};
  if (eos_id) meta["eos_id"] = *eos_id;
  return meta;
}

// The entropy (nats) of a unigram distribution given by its counts.
double entropy_of(const std::vector<std::uint64_t>& counts, std::uint64_t total) {
  double entropy = 0;
  for (const std::uint64_t count : counts) {
    if (count == 0) continue;
    const double p = static_cast<double>(count) / static_cast<double>(total);
    entropy -= p * std::log(p);
  }
  return entropy;
}

// A tokenizer the experiment names (data.tokenizer = a .model file) rather than trains.
std::optional<Tokenizer> given_tokenizer(const config::DataConfig& d) {
  if (d.trains_tokenizer() || !d.has_tokenizer()) return std::nullopt;
  return Tokenizer::load(d.tokenizer);
}

// Every input file: a text corpus's sources, or a token data set's files of all splits.
std::vector<SourceFile> all_inputs(const config::DataConfig& d) {
  auto files = resolve_sources(d);
  if (!d.token_files()) return files;
  for (auto [sources, key] :
       {std::pair{&d.validation_sources, "data.validation_sources"}, std::pair{&d.test_sources, "data.test_sources"}}) {
    if (sources->empty()) continue;
    const auto more = resolve_sources(d, *sources, key);
    files.insert(files.end(), more.begin(), more.end());
  }
  return files;
}

// Token files (data.format = "llmc", "uint16" or "uint32") into a data set:
// each split's files, in path order, are checked (data/token_files.h) and
// copied into shards of the data set's own layout, so training, evaluation
// and resumption read them like any other.
void import_token_files(const config::Experiment& experiment, std::optional<Tokenizer> tokenizer, PrepareResult& result,
                        support::Progress& progress) {
  const config::DataConfig& d = experiment.data;
  const std::int64_t vocab = tokenizer ? tokenizer->vocab_size() : d.vocab_size;
  const int token_bytes = vocab <= 65536 ? 2 : 4;
  PrepareStats& stats = result.stats;
  stats.token_files = true;
  result.tokenizer_hash = tokenizer ? tokenizer->hash() : "";
  build_data_set(d.dir, experiment.path, [&](const fs::path& tmp) {
    if (tokenizer) write_text_file(tmp / "tokenizer.model", tokenizer->model_bytes());
    std::vector<std::uint64_t> unigram_counts(static_cast<std::size_t>(vocab), 0);
    nlohmann::json sources = nlohmann::json::array();
    auto import_split = [&](const std::vector<std::string>& names, const char* key, const std::string& split) {
      const auto files = resolve_sources(d, names, key);
      ShardWriter writer(tmp, split, token_bytes, kTokensPerShard);
      std::vector<int> chunk;
      for (std::size_t i = 0; i < files.size(); ++i) {
        TokenFileReader reader(files[i].path, d.format, vocab);
        while (reader.next(chunk, std::size_t{1} << 20)) {
          if (split == "train") {
            for (const int id : chunk) ++unigram_counts[static_cast<std::size_t>(id)];
          }
          writer.append(chunk);
        }
        sources.push_back(files[i].path.string());
        progress.update(fmt::format("importing {}: {}/{} files", split, i + 1, files.size()));
      }
      stats.files += files.size();
      SplitInfo info = writer.finish(0);
      progress.done(fmt::format("imported {} {} tokens from {} files", info.tokens, split, files.size()));
      return info;
    };
    const SplitInfo train_info = import_split(d.sources, "data.sources", "train");
    const SplitInfo val_info = import_split(d.validation_sources, "data.validation_sources", "val");
    nlohmann::json splits = {{"train", split_json(train_info)}, {"val", split_json(val_info)}};
    if (!d.test_sources.empty()) {
      const SplitInfo test_info = import_split(d.test_sources, "data.test_sources", "test");
      require_whole_sequence(test_info, "test", experiment, "data.test_sources");
      splits["test"] = split_json(test_info);
      stats.test_tokens = test_info.tokens;
    }
    if (train_info.tokens <= static_cast<std::uint64_t>(d.seq_len)) {
      throw DataError(fmt::format("{}: data.sources hold {} tokens, not one sequence of data.seq_len + 1 = {}",
                                  experiment.path, train_info.tokens, d.seq_len + 1));
    }
    require_whole_sequence(train_info, "training", experiment, "data.sources");
    if (!d.validation_sources.empty()) {
      require_whole_sequence(val_info, "validation", experiment, "data.validation_sources");
    }
    stats.train_tokens = train_info.tokens;
    stats.validation_tokens = val_info.tokens;
    stats.tokens = train_info.tokens + val_info.tokens + stats.test_tokens;
    stats.unigram_entropy = entropy_of(unigram_counts, train_info.tokens);
    return meta_json(result, vocab, token_bytes, std::move(splits), experiment.path, std::move(sources), std::nullopt);
  });
}

}  // namespace

std::string expected_fingerprint(const config::Experiment& experiment) {
  const config::DataConfig& d = experiment.data;
  const auto given = given_tokenizer(d);
  return fingerprint_of(d, all_inputs(d), given ? given->hash() : "");
}

std::string stored_fingerprint(const std::filesystem::path& dir) {
  const std::string text = meta_json_text(dir);
  const auto meta = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto it = meta.is_object() ? meta.find("fingerprint") : meta.end();
  return it != meta.end() && it->is_string() ? it->get<std::string>() : "";
}

PrepareResult prepare(const config::Experiment& experiment, std::FILE* log) {
  const config::DataConfig& d = experiment.data;
  const fs::path dir = d.dir;
  const auto files = all_inputs(d);
  std::optional<Tokenizer> given = given_tokenizer(d);

  PrepareResult result;
  result.dir = dir;
  result.fingerprint = fingerprint_of(d, files, given ? given->hash() : "");
  if (fs::exists(dir / "meta.json")) {
    try {
      const auto meta = nlohmann::json::parse(meta_json_text(dir));
      if (meta.at("fingerprint") == result.fingerprint) {
        result.reused = true;
        result.tokenizer_hash = meta.at("tokenizer_hash");
        result.stats = stats_from_json(meta.at("stats"));
        return result;
      }
    } catch (const nlohmann::json::exception&) {
      // An unreadable meta.json is rebuilt like a stale one; one that is no
      // regular file (a FIFO would block for ever) is refused below.
    }
  }

  // Before any work: a data.dir that holds anything prepare did not make is refused.
  check_replaceable(dir, experiment.path);
  support::Progress progress(log);
  if (d.token_files()) {
    import_token_files(experiment, std::move(given), result, progress);
    return result;
  }
  // data.threads = 0: the cores this process may use (its affinity mask: a
  // SLURM allocation's, not the node's).
  const int threads = d.threads > 0 ? static_cast<int>(d.threads) : support::usable_cores();
  PrepareStats& stats = result.stats;
  stats.files = files.size();

  // Read, deduplicate by content, split by content hash (stable under reordering).
  DocumentReader reader(d);
  std::vector<Document> all;
  for (std::size_t i = 0; i < files.size(); ++i) {
    reader.read(files[i], all);
    progress.update(fmt::format("reading {}/{} files, {} documents", i + 1, files.size(), all.size()));
  }
  for (const auto& [reason, n] : reader.skipped()) stats.skipped[reason] = n;
  std::vector<Document> train;
  std::vector<Document> validation;
  std::vector<Document> test;
  std::unordered_set<std::string> seen;
  // Split keys below the first threshold go to validation, then to test: a
  // test split added later takes its documents from training, never from
  // validation, so validation curves stay comparable.
  const auto validation_below = static_cast<std::uint64_t>(d.validation_fraction * 18446744073709551615.0);
  const auto test_below =
      static_cast<std::uint64_t>((d.validation_fraction + d.test_fraction) * 18446744073709551615.0);
  for (auto& doc : all) {
    const auto digest = support::sha256(doc.text);
    if (d.deduplicate && !seen.insert(support::to_hex(digest)).second) {
      ++stats.duplicates_removed;
      continue;
    }
    // Re-hash with a salt so the split is independent of the dedup key.
    const auto split_key = support::leading_u64(support::sha256("split:" + doc.text));
    (split_key < validation_below ? validation : split_key < test_below ? test : train).push_back(std::move(doc));
  }
  all.clear();
  const std::size_t files_kept = train.size() + validation.size() + test.size();
  // Cut after the split, so that the pieces of one file stay in its split.
  if (!d.document_starts.empty()) {
    const DocumentStarts starts(d.document_starts);
    for (auto* split : {&train, &validation, &test}) *split = starts.split(std::move(*split));
  }
  stats.documents = train.size() + validation.size() + test.size();
  if (train.empty()) {
    throw DataError(fmt::format("{}: the corpus is empty after filtering ({} files read; skipped: {})", experiment.path,
                                files.size(), nlohmann::json(stats.skipped).dump()));
  }
  progress.done(fmt::format(
      "read {} files: {} documents{} ({} train, {} validation{}), {} duplicates removed", files.size(), stats.documents,
      d.document_starts.empty() ? "" : fmt::format(" cut from {} at data.document_starts", files_kept), train.size(),
      validation.size(), d.test_fraction > 0 ? fmt::format(", {} test", test.size()) : "", stats.duplicates_removed));

  // Tokenizer.
  Tokenizer tokenizer = [&] {
    if (given) return std::move(*given);
    progress.done(fmt::format("training a {} tokenizer, {} pieces, on up to {} lines of the training split...",
                              config::name_of(d.tokenizer_model), d.vocab_size, d.tokenizer_max_lines));
    return Tokenizer::train(train, {d.tokenizer_model, static_cast<int>(d.vocab_size),
                                    static_cast<std::size_t>(d.tokenizer_max_lines), threads});
  }();
  result.tokenizer_hash = tokenizer.hash();

  build_data_set(dir, experiment.path, [&](const fs::path& tmp) {
    write_text_file(tmp / "tokenizer.model", tokenizer.model_bytes());
    const int token_bytes = tokenizer.vocab_size() <= 65536 ? 2 : 4;

    std::uint64_t unknown_or_byte = 0;
    std::vector<std::uint64_t> unigram_counts(static_cast<std::size_t>(tokenizer.vocab_size()), 0);
    auto write_split = [&](const std::vector<Document>& docs, const std::string& name) {
      std::uint64_t bytes = 0;
      for (const auto& doc : docs) bytes += doc.text.size();
      const auto start = std::chrono::steady_clock::now();
      auto encoded = encode_documents(tokenizer, docs, threads, [&](std::uint64_t done) {
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        progress.update(fmt::format("tokenizing {}: {:.1f}/{:.1f} MB, {:.1f} MB/s", name,
                                    static_cast<double>(done) / 1e6, static_cast<double>(bytes) / 1e6,
                                    static_cast<double>(done) / 1e6 / s));
      });
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      progress.done(fmt::format("tokenized {} {} documents, {:.1f} MB in {:.1f} s ({:.1f} MB/s, {} threads)",
                                docs.size(), name, static_cast<double>(bytes) / 1e6, seconds,
                                static_cast<double>(bytes) / 1e6 / std::max(seconds, 1e-9), threads));
      ShardWriter writer(tmp, name, token_bytes, kTokensPerShard);
      for (std::size_t i = 0; i < docs.size(); ++i) {
        stats.characters += code_points(docs[i].text);
        stats.bytes += docs[i].text.size();
        for (int id : encoded[i]) unknown_or_byte += (id == Tokenizer::kUnk || tokenizer.is_byte(id)) ? 1 : 0;
        encoded[i].push_back(Tokenizer::kEos);  // documents are joined by </s>
        if (name == "train") {
          for (int id : encoded[i]) ++unigram_counts[static_cast<std::size_t>(id)];
        }
        writer.append(encoded[i]);
      }
      return writer.finish(docs.size());
    };
    const SplitInfo train_info = write_split(train, "train");
    require_whole_sequence(train_info, "training", experiment, "the documents data.validation_fraction leaves");
    const SplitInfo val_info = write_split(validation, "val");
    if (d.validation_fraction > 0) {
      require_whole_sequence(val_info, "validation", experiment,
                             fmt::format("data.validation_fraction = {:g}", d.validation_fraction));
    }
    nlohmann::json splits = {{"train", split_json(train_info)}, {"val", split_json(val_info)}};
    if (d.test_fraction > 0) {
      const SplitInfo test_info = write_split(test, "test");
      require_whole_sequence(test_info, "test", experiment, fmt::format("data.test_fraction = {:g}", d.test_fraction));
      splits["test"] = split_json(test_info);
      stats.test_tokens = test_info.tokens;
    }
    stats.train_tokens = train_info.tokens;
    stats.validation_tokens = val_info.tokens;
    stats.tokens = train_info.tokens + val_info.tokens + stats.test_tokens;
    const std::uint64_t separators = stats.documents;
    stats.characters_per_token = static_cast<double>(stats.characters) /
                                 static_cast<double>(std::max<std::uint64_t>(1, stats.tokens - separators));
    stats.unknown_or_byte_rate = static_cast<double>(unknown_or_byte) /
                                 static_cast<double>(std::max<std::uint64_t>(1, stats.tokens - separators));
    tokenizer_metrics(tokenizer, validation.empty() ? train : validation, stats);
    stats.unigram_entropy = entropy_of(unigram_counts, train_info.tokens);

    nlohmann::json sources = nlohmann::json::array();
    for (const auto& f : files) sources.push_back(f.path.string());
    return meta_json(result, tokenizer.vocab_size(), token_bytes, std::move(splits), experiment.path,
                     std::move(sources), Tokenizer::kEos);
  });
  return result;
}

std::string summary_line(const PrepareResult& r) {
  const PrepareStats& s = r.stats;
  if (s.token_files) {
    return fmt::format(
        "data set {} {}: {} tokens from {} token files (train {}, validation {}{}); `hpctrain prepare` "
        "prints all its statistics",
        r.dir.string(), r.reused ? "reused" : "prepared", s.tokens, s.files, s.train_tokens, s.validation_tokens,
        s.test_tokens > 0 ? fmt::format(", test {}", s.test_tokens) : "");
  }
  return fmt::format(
      "data set {} {}: {} documents, {} tokens (train {}, validation {}{}), {:.3f} characters per token; `hpctrain "
      "prepare` prints all its statistics",
      r.dir.string(), r.reused ? "reused" : "prepared", s.documents, s.tokens, s.train_tokens, s.validation_tokens,
      s.test_tokens > 0 ? fmt::format(", test {}", s.test_tokens) : "", s.characters_per_token);
}

void print_stats(const PrepareResult& r, std::FILE* out) {
  const PrepareStats& s = r.stats;
  (void)std::fprintf(
      out, "%s",
      fmt::format("data set {} ({})\n", r.dir.string(), r.reused ? "reused: inputs unchanged" : "prepared").c_str());
  if (s.token_files) {
    (void)std::fputs(
        fmt::format("  token files          {}\n"
                    "  tokens               {} (train {}, validation {}{})\n"
                    "  unigram entropy      {:.3f} nats (train tokens)\n"
                    "  tokenizer            {}\n"
                    "  fingerprint          {}\n",
                    s.files, s.tokens, s.train_tokens, s.validation_tokens,
                    s.test_tokens > 0 ? fmt::format(", test {}", s.test_tokens) : "", s.unigram_entropy,
                    r.tokenizer_hash.empty() ? "none (data.tokenizer names none)" : "sha256 " + r.tokenizer_hash,
                    r.fingerprint)
            .c_str(),
        out);
    return;
  }
  std::string skipped;
  for (const auto& [reason, n] : s.skipped) skipped += fmt::format("{}{} {}", skipped.empty() ? "" : ", ", n, reason);
  const std::string text = fmt::format(
      "  files                {}\n"
      "  documents            {} (duplicates removed {}; skipped: {})\n"
      "  characters           {} ({} bytes)\n"
      "  tokens               {} (train {}, validation {}{})\n"
      "  characters/token     {:.3f}\n"
      "  subword fertility    {:.3f} tokens per word\n"
      "  continued words      {:.2f}%\n"
      "  unknown/byte tokens  {:.4f}%\n"
      "  unigram entropy      {:.3f} nats (train tokens)\n"
      "  tokenizer            sha256 {}\n"
      "  fingerprint          {}\n",
      s.files, s.documents, s.duplicates_removed, skipped.empty() ? "none" : skipped, s.characters, s.bytes, s.tokens,
      s.train_tokens, s.validation_tokens, s.test_tokens > 0 ? fmt::format(", test {}", s.test_tokens) : "",
      s.characters_per_token, s.subword_fertility, 100 * s.continued_words, 100 * s.unknown_or_byte_rate,
      s.unigram_entropy, r.tokenizer_hash, r.fingerprint);
  (void)std::fputs(text.c_str(), out);
}

}  // namespace hpctrain::data
