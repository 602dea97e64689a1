// Sampling text from a causal model: temperature and top-k, deterministic for
// a given seed, with the prompt's last token healed (data/token_healing.h).
// The prompt starts a new document (after </s>, as training separates them),
// and the sample ends where the model ends that document (at </s>), or after
// new_tokens.
#pragma once

#include <cstdint>
#include <string>

#include "data/tokenizer.h"
#include "model/language_model.h"

namespace hpctrain::train {

std::string generate(model::LanguageModel& model, const data::Tokenizer& tokenizer, const std::string& prompt,
                     std::int64_t new_tokens, double temperature, std::int64_t top_k, std::int64_t max_seq_len,
                     std::uint64_t seed);

}  // namespace hpctrain::train
