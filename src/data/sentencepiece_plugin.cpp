// The plugin itself (libhpctrain_sentencepiece.so): SentencePieceEngine over
// Debian's libsentencepiece. Errors are thrown as std::runtime_error; the same
// libstdc++ serves both sides of the boundary.
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <stdexcept>

#include "data/sentencepiece_engine.h"

namespace {

class Lines final : public sentencepiece::SentenceIterator {
 public:
  explicit Lines(const std::vector<std::string>& lines) : lines_(lines) {}
  bool done() const override { return position_ >= lines_.size(); }
  void Next() override { ++position_; }
  const std::string& value() const override { return lines_[position_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& lines_;
  std::size_t position_ = 0;
};

class Engine final : public hpctrain::data::SentencePieceEngine {
 public:
  std::string train(const std::unordered_map<std::string, std::string>& options,
                    const std::vector<std::string>& lines) override {
    Lines iterator(lines);
    std::string model;
    const auto status = sentencepiece::SentencePieceTrainer::Train(options, &iterator, &model);
    if (!status.ok()) throw std::runtime_error("tokenizer training failed: " + status.ToString());
    return model;
  }
  std::string load(const std::string& model) override {
    // The library throws too, not only returns a status: its Darts trie
    // builder refuses an empty piece with an exception (found by the
    // tokenizer_model fuzz harness), which must not end the process.
    try {
      const auto status = processor_.LoadFromSerializedProto(model);
      return status.ok() ? std::string() : status.ToString();
    } catch (const std::exception& e) {
      return e.what();
    }
  }
  std::vector<int> encode(std::string_view text) const override {
    std::vector<int> ids;
    const auto status = processor_.Encode(text, &ids);
    if (!status.ok()) throw std::runtime_error("tokenizer: " + status.ToString());
    return ids;
  }
  std::string decode(const std::vector<int>& ids) const override {
    std::string text;
    const auto status = processor_.Decode(ids, &text);
    if (!status.ok()) throw std::runtime_error("tokenizer: " + status.ToString());
    return text;
  }
  int piece_count() const override { return processor_.GetPieceSize(); }
  int piece_id(std::string_view piece) const override { return processor_.PieceToId(piece); }
  int pad_id() const override { return processor_.pad_id(); }
  int eos_id() const override { return processor_.eos_id(); }
  bool is_control(int id) const override { return processor_.IsControl(id); }
  bool is_unknown(int id) const override { return processor_.IsUnknown(id); }
  bool is_byte(int id) const override { return processor_.IsByte(id); }

 private:
  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) hpctrain::data::SentencePieceEngine*
hpctrain_new_sentencepiece_engine() {
  return new Engine();
}
