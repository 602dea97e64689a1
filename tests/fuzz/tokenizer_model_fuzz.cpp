// Fuzz harness: a SentencePiece tokenizer.model as hpctrain reads one from a
// Hugging Face directory or a data set (data/tokenizer.h): the input is the
// model's bytes (SentencePiece's ModelProto: pieces, trainer and normalizer
// specs, the normalizer's precompiled charsmap included). Any input must
// either be refused with a DataError or give a tokenizer that encodes and
// decodes text (several scripts, combining marks, controls, invalid UTF-8)
// without reading outside its buffers.
#include <cstdint>
#include <string>
#include <string_view>

#include "data/data_error.h"
#include "data/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string kText =
      "def f(x):\n\treturn x  # \xc3\xa9t\xc3\xa9 \xe2\x80\x94 caf\x65\xcc\x81 \xe4\xbd\xa0\xe5\xa5\xbd "
      "\xf0\x9f\x98\x80 \x1b[2J \xff\xfe\xc3 \xef\xbc\xa1\xef\xbc\xa2 \xe2\x84\xab";
  try {
    const auto tokenizer =
        hpctrain::data::Tokenizer::from_model(std::string(reinterpret_cast<const char*>(data), size), "fuzz input");
    (void)tokenizer.decode(tokenizer.encode(kText));
  } catch (const hpctrain::data::DataError&) {
    // refused, naming the model
  }
  return 0;
}
