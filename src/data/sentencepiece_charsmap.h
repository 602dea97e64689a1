// What hpctrain checks of a SentencePiece model before the library sees it.
// libsentencepiece trusts a model's precompiled_charsmap (the normalizer's
// Darts trie and its string blob): a crafted one makes it read far outside
// its buffers while it normalizes text. hpctrain's tokenizers are trained
// with the identity normalizer (data/tokenizer.cpp), whose charsmap is empty,
// and a model without hpctrain's special pieces is refused anyway, so no
// model hpctrain can use needs one: a non-empty charsmap, in the normalizer
// or the denormalizer, is refused before the library parses the model.
#pragma once

#include <string>
#include <string_view>

namespace hpctrain::data {

// Throws DataError naming `origin` for a malformed model proto (its wire
// format, as far as the normalizer specs) or a non-empty charsmap.
void refuse_precompiled_charsmap(std::string_view model, const std::string& origin);

}  // namespace hpctrain::data
