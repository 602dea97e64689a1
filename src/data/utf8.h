// Strict UTF-8 validation (no overlong forms, surrogates or code points past
// U+10FFFF), so the tokenizer only ever sees well-formed text.
#pragma once

#include <cstddef>
#include <string_view>

namespace hpctrain::data {

// The byte offset of the first invalid sequence, or text.size() when valid.
std::size_t first_invalid_utf8(std::string_view text);

}  // namespace hpctrain::data
