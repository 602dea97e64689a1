#include "train/generate.h"

#include <torch/types.h>
#include <torch/utils.h>

#include <optional>

#include "data/sampler.h"
#include "data/token_healing.h"

namespace hpctrain::train {

std::string generate(model::LanguageModel& model, const data::Tokenizer& tokenizer, const std::string& prompt,
                     std::int64_t new_tokens, double temperature, std::int64_t top_k, std::int64_t max_seq_len,
                     std::uint64_t seed) {
  torch::NoGradGuard no_grad;
  model.eval();
  std::vector<int> ids = tokenizer.encode(prompt);
  // The prompt's last token healed (data/token_healing.h): the first token sampled may be any that extends it.
  std::optional<torch::Tensor> healing;
  if (const auto healed = data::heal_prompt_end(tokenizer, ids)) {
    healing = torch::zeros({static_cast<std::int64_t>(healed->allowed.size())}, torch::kBool);
    auto* allowed = healing->data_ptr<bool>();
    for (std::size_t id = 0; id < healed->allowed.size(); ++id) allowed[id] = healed->allowed[id];
  }
  // A prompt starts a new document: training joins documents with </s>, so
  // the model reads what follows it as the beginning of one (a file's first
  // line, or with data.document_starts a top-level definition), not as text
  // cut out of the middle of one, which is all a window's first token is.
  ids.insert(ids.begin(), data::Tokenizer::kEos);
  std::uint64_t state = data::mix64(seed);
  for (std::int64_t i = 0; i < new_tokens; ++i) {
    const auto start =
        static_cast<std::int64_t>(ids.size()) > max_seq_len ? ids.size() - static_cast<std::size_t>(max_seq_len) : 0;
    std::vector<std::int64_t> window(ids.begin() + static_cast<std::ptrdiff_t>(start), ids.end());
    const torch::Tensor input =
        torch::tensor(window, torch::kInt64).unsqueeze(0).to(model.parameters().front().device());
    torch::Tensor logits = model.forward(input)[0][-1].to(torch::kCPU, torch::kFloat64) / temperature;
    if (i == 0 && healing)
      logits = logits.masked_fill(healing->logical_not(), -std::numeric_limits<double>::infinity());
    if (top_k > 0 && top_k < logits.size(0)) {
      const double kth = std::get<0>(logits.topk(top_k))[-1].item<double>();
      logits = logits.masked_fill(logits < kth, -std::numeric_limits<double>::infinity());
    }
    const torch::Tensor probs = torch::softmax(logits, 0);
    state = data::mix64(state);
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    const torch::Tensor cumulative = probs.cumsum(0);
    auto next = torch::searchsorted(cumulative, torch::tensor({u}, torch::kFloat64)).item<std::int64_t>();
    next = std::min<std::int64_t>(next, probs.size(0) - 1);
    // </s> ends the document the prompt began: what follows it would be
    // another, unrelated one.
    if (next == data::Tokenizer::kEos) break;
    ids.push_back(static_cast<int>(next));
  }
  model.train();
  return tokenizer.decode(ids);
}

}  // namespace hpctrain::train
