// The boundary to SentencePiece. Debian's libsentencepiece carries its own copy
// of protobuf (3.14) and exports it, which collides with the libprotobuf (3.21)
// LibTorch loads: linking both into one binary crashes at start-up. So
// SentencePiece lives in a plugin, libhpctrain_sentencepiece.so, that
// load_sentencepiece_engine() opens with RTLD_LOCAL | RTLD_DEEPBIND: its protobuf
// stays private to it. This interface is all that crosses the boundary.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace hpctrain::data {

class SentencePieceEngine {
 public:
  virtual ~SentencePieceEngine() = default;
  // Trains on `lines` with SentencePiece trainer options; returns the serialized model.
  virtual std::string train(const std::unordered_map<std::string, std::string>& options,
                            const std::vector<std::string>& lines) = 0;
  // Loads a serialized model; returns an error message, empty on success.
  virtual std::string load(const std::string& model) = 0;
  [[nodiscard]] virtual std::vector<int> encode(std::string_view text) const = 0;
  [[nodiscard]] virtual std::string decode(const std::vector<int>& ids) const = 0;
  [[nodiscard]] virtual int piece_count() const = 0;
  [[nodiscard]] virtual int piece_id(std::string_view piece) const = 0;
  [[nodiscard]] virtual int pad_id() const = 0;
  [[nodiscard]] virtual int eos_id() const = 0;
  [[nodiscard]] virtual bool is_control(int id) const = 0;
  [[nodiscard]] virtual bool is_unknown(int id) const = 0;
  [[nodiscard]] virtual bool is_byte(int id) const = 0;
};

// Where the plugin is loaded from, the first that holds it:
// $HPCTRAIN_SENTENCEPIECE_PLUGIN, beside the executable (the build tree),
// PREFIX/lib/hpctrain/ for an executable in PREFIX/bin (`cmake --install`, the
// Debian package), then the build tree the executable was built in.
std::string sentencepiece_plugin_path();

// Opens the plugin and makes an engine. The engine keeps the plugin open.
// Throws DataError when the plugin cannot be loaded.
std::shared_ptr<SentencePieceEngine> load_sentencepiece_engine();

}  // namespace hpctrain::data

// The plugin's one entry point.
extern "C" hpctrain::data::SentencePieceEngine* hpctrain_new_sentencepiece_engine();
