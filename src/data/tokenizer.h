// SentencePiece tokenizer: trained on the corpus (a tokenizer from the
// domain it will read) or loaded from a .model file. Configured for code: no normalisation,
// whitespace and indentation kept exactly, newline as a token of its own, and
// byte fallback so any text round-trips without <unk>.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "config/experiment.h"
#include "data/documents.h"
#include "data/sentencepiece_engine.h"

namespace hpctrain::data {

// What [data] asks of the tokenizer (its defaults are the config's).
struct TokenizerTraining {
  config::TokenizerKind model;
  int vocab_size;
  std::size_t max_lines;  // sampled evenly from the documents
  int threads;
};

class Tokenizer {
 public:
  // Special pieces, fixed by training: <unk> 0, <s> 1, </s> 2, <pad> 3, <mask> 4.
  static constexpr int kUnk = 0, kBos = 1, kEos = 2, kPad = 3, kMask = 4;

  static Tokenizer train(const std::vector<Document>& documents, const TokenizerTraining& options);
  static Tokenizer load(const std::filesystem::path& model_file);
  static Tokenizer from_model(std::string model_bytes, const std::string& origin);

  [[nodiscard]] std::vector<int> encode(std::string_view text) const;
  [[nodiscard]] std::string decode(const std::vector<int>& ids) const;
  [[nodiscard]] int vocab_size() const;
  [[nodiscard]] bool is_special(int id) const;  // never masked, never sampled as a random replacement
  [[nodiscard]] bool is_byte(int id) const;     // a byte-fallback piece
  [[nodiscard]] const std::string& model_bytes() const { return model_; }
  [[nodiscard]] const std::string& hash() const { return hash_; }  // SHA-256 of the model, hex

 private:
  explicit Tokenizer(std::shared_ptr<SentencePieceEngine> engine) : engine_(std::move(engine)) {}
  std::shared_ptr<SentencePieceEngine> engine_;
  std::string model_;
  std::string hash_;
};

}  // namespace hpctrain::data
