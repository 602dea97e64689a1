#include "data/tokenizer.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "data/data_error.h"
#include "data/sentencepiece_charsmap.h"
#include "support/bounded_file.h"
#include "support/sha256.h"

namespace hpctrain::data {
namespace {

template <typename F>
void for_each_line(const std::vector<Document>& documents, F&& f) {
  for (const auto& d : documents) {
    std::size_t start = 0;
    while (start < d.text.size()) {
      auto end = d.text.find('\n', start);
      if (end == std::string::npos) end = d.text.size();
      if (end > start) f(std::string_view(d.text).substr(start, end - start));
      start = end + 1;
    }
  }
}

// Lines of the documents, sampled evenly (every k-th) up to a budget: the
// trainer reads sentences, and a line is the natural sentence of code.
std::vector<std::string> sample_lines(const std::vector<Document>& documents, std::size_t budget) {
  std::size_t total = 0;
  for_each_line(documents, [&](std::string_view) { ++total; });
  const double stride = total > budget ? static_cast<double>(total) / static_cast<double>(budget) : 1.0;
  std::vector<std::string> lines;
  double next = 0;
  std::size_t index = 0;
  for_each_line(documents, [&](std::string_view line) {
    if (static_cast<double>(index++) >= next) {
      lines.emplace_back(line);
      next += stride;
    }
  });
  return lines;
}

}  // namespace

Tokenizer Tokenizer::train(const std::vector<Document>& documents, const TokenizerTraining& options) {
  const std::unordered_map<std::string, std::string> spec = {
      {"model_type", std::string(config::name_of(options.model))},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"byte_fallback", "true"},
      {"character_coverage", "0.9999"},
      // Code needs its whitespace: no normalisation, no collapsing of spaces,
      // no dummy "▁" prefix, and pieces made only of spaces (indentation).
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "false"},
      {"allow_whitespace_only_pieces", "true"},
      {"split_digits", "true"},
      {"max_sentence_length", "16384"},
      {"unk_id", std::to_string(kUnk)},
      {"bos_id", std::to_string(kBos)},
      {"eos_id", std::to_string(kEos)},
      {"pad_id", std::to_string(kPad)},
      // <mask> for MLM; "\n" so a line break is one token rather than a byte.
      {"user_defined_symbols", "<mask>,\n"},
      {"num_threads", std::to_string(options.threads)},
      {"shuffle_input_sentence", "false"},
      {"minloglevel", "2"},
  };
  auto engine = load_sentencepiece_engine();
  std::string model;
  try {
    model = engine->train(spec, sample_lines(documents, options.max_lines));
  } catch (const std::runtime_error& e) {
    throw DataError(e.what());
  }
  return from_model(std::move(model), "the trained tokenizer");
}

Tokenizer Tokenizer::load(const std::filesystem::path& model_file) {
  // SentencePiece models are kilobytes to a few MB; bound the read before it starts.
  constexpr std::size_t kMaxModelBytes = std::size_t{256} << 20;
  try {
    return from_model(support::read_bounded_file(model_file, kMaxModelBytes, "tokenizer model"), model_file.string());
  } catch (const support::InputError& e) {
    throw DataError(e.what());
  }
}

Tokenizer Tokenizer::from_model(std::string model_bytes, const std::string& origin) {
  refuse_precompiled_charsmap(model_bytes, origin);  // before the library reads it
  Tokenizer t(load_sentencepiece_engine());
  if (const std::string error = t.engine_->load(model_bytes); !error.empty()) {
    throw DataError(fmt::format("{}: not a SentencePiece model: {}", origin, error));
  }
  if (t.engine_->piece_id("<mask>") != kMask || t.engine_->pad_id() != kPad || t.engine_->eos_id() != kEos) {
    throw DataError(
        fmt::format("{}: the model lacks hpctrain's special pieces (<pad> {}, </s> {}, <mask> {}); "
                    "train it with hpctrain prepare",
                    origin, kPad, kEos, kMask));
  }
  t.model_ = std::move(model_bytes);
  t.hash_ = support::to_hex(support::sha256(t.model_));
  return t;
}

std::vector<int> Tokenizer::encode(std::string_view text) const {
  try {
    return engine_->encode(text);
  } catch (const std::runtime_error& e) {
    throw DataError(e.what());
  }
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  try {
    return engine_->decode(ids);
  } catch (const std::runtime_error& e) {
    throw DataError(e.what());
  }
}

int Tokenizer::vocab_size() const { return engine_->piece_count(); }

bool Tokenizer::is_special(int id) const { return id == kMask || engine_->is_control(id) || engine_->is_unknown(id); }

bool Tokenizer::is_byte(int id) const { return engine_->is_byte(id); }

}  // namespace hpctrain::data
