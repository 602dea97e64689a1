#include "data/sentencepiece_charsmap.h"

#include <fmt/format.h>

#include <cstdint>
#include <optional>

#include "data/data_error.h"

namespace hpctrain::data {
namespace {

// A bounds-checked walk over protobuf's wire format: each field's number,
// wire type and, for length-delimited fields, its bytes.
class WireReader {
 public:
  WireReader(std::string_view bytes, const std::string& origin, const char* message)
      : bytes_(bytes), origin_(origin), message_(message) {}

  [[nodiscard]] bool done() const { return position_ >= bytes_.size(); }

  struct Field {
    std::uint64_t number = 0;
    std::optional<std::string_view> bytes;  // length-delimited fields only
  };

  Field next() {
    const std::uint64_t key = varint();
    Field field{key >> 3U, std::nullopt};
    switch (key & 7U) {
      case 0: (void)varint(); break;
      case 1: skip(8); break;
      case 2: {
        const std::uint64_t length = varint();
        if (length > bytes_.size() - position_) fail(fmt::format("field {} runs past the end", field.number));
        field.bytes = bytes_.substr(position_, length);
        position_ += length;
        break;
      }
      case 5: skip(4); break;
      default: fail(fmt::format("field {} has wire type {}, which a model proto does not use", field.number, key & 7U));
    }
    if (field.number == 0) fail("a field numbered 0");
    return field;
  }

 private:
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (done()) fail("a number runs past the end");
      const auto byte = static_cast<std::uint8_t>(bytes_[position_++]);
      value |= static_cast<std::uint64_t>(byte & 0x7FU) << shift;
      if ((byte & 0x80U) == 0) return value;
    }
    fail("a number of more than 10 bytes");
  }
  void skip(std::size_t n) {
    if (n > bytes_.size() - position_) fail("a fixed-size field runs past the end");
    position_ += n;
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw DataError(
        fmt::format("{}: not a SentencePiece model: its {}, at byte {}: {}", origin_, message_, position_, what));
  }

  std::string_view bytes_;
  const std::string& origin_;
  const char* message_;
  std::size_t position_ = 0;
};

// ModelProto: normalizer_spec = 3, denormalizer_spec = 5; NormalizerSpec:
// precompiled_charsmap = 2 (sentencepiece_model.proto).
constexpr std::uint64_t kNormalizerSpec = 3;
constexpr std::uint64_t kDenormalizerSpec = 5;
constexpr std::uint64_t kPrecompiledCharsmap = 2;

}  // namespace

void refuse_precompiled_charsmap(std::string_view model, const std::string& origin) {
  WireReader proto(model, origin, "model proto");
  while (!proto.done()) {
    const WireReader::Field field = proto.next();
    if ((field.number != kNormalizerSpec && field.number != kDenormalizerSpec) || !field.bytes) continue;
    const char* spec = field.number == kNormalizerSpec ? "normalizer_spec" : "denormalizer_spec";
    WireReader nested(*field.bytes, origin, spec);
    while (!nested.done()) {
      const WireReader::Field inner = nested.next();
      if (inner.number == kPrecompiledCharsmap && inner.bytes && !inner.bytes->empty()) {
        throw DataError(fmt::format(
            "{}: its {} carries a precompiled_charsmap of {} bytes: hpctrain's tokenizers normalize nothing "
            "(normalization_rule_name = identity), and libsentencepiece does not check a charsmap before it reads "
            "through it, so hpctrain refuses one; prepare the tokenizer with hpctrain",
            origin, spec, inner.bytes->size()));
      }
    }
  }
}

}  // namespace hpctrain::data
