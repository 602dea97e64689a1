// Token healing for prompts. A prompt that ends inside what the corpus writes
// as one token is tokenized differently from the same text in training:
// "def " ends in a lone space piece, which in a code corpus mostly stands
// before a digit (digits are split), where "def foo" is "def" + " foo".
// Sampling after the lone space then writes `def 1`. Healing takes the
// prompt's last token off and lets the first sampled token be any whose text
// starts with it, so the model picks the cut token's longer forms (" foo",
// " __init__") itself.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "data/tokenizer.h"

namespace hpctrain::data {

struct HealedPrompt {
  std::string cut;            // the text of the token taken off
  std::vector<bool> allowed;  // by token id: may be sampled first
};

// Takes the last token off `ids` and returns what may replace it; none (and
// `ids` unchanged) when the prompt is empty or ends in a special token.
std::optional<HealedPrompt> heal_prompt_end(const Tokenizer& tokenizer, std::vector<int>& ids);

}  // namespace hpctrain::data
