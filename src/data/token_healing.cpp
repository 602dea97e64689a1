#include "data/token_healing.h"

namespace hpctrain::data {

std::optional<HealedPrompt> heal_prompt_end(const Tokenizer& tokenizer, std::vector<int>& ids) {
  if (ids.empty() || tokenizer.is_special(ids.back())) return std::nullopt;
  HealedPrompt healed;
  healed.cut = tokenizer.decode({ids.back()});
  if (healed.cut.empty()) return std::nullopt;
  ids.pop_back();
  const int vocab = tokenizer.vocab_size();
  healed.allowed.assign(static_cast<std::size_t>(vocab), false);
  for (int id = 0; id < vocab; ++id) {
    if (tokenizer.is_special(id)) continue;
    const std::string text = tokenizer.decode({id});
    healed.allowed[static_cast<std::size_t>(id)] = text.compare(0, healed.cut.size(), healed.cut) == 0;
  }
  return healed;
}

}  // namespace hpctrain::data
