#include "model/model_bytes.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace hpctrain::model {

double estimated_parameters(const config::ModelConfig& c, std::int64_t vocab_size) {
  const auto d = static_cast<double>(c.d_model);
  const auto vocab = static_cast<double>(vocab_size);
  const auto layers = static_cast<double>(c.n_layer);
  const auto positions = static_cast<double>(c.max_seq_len);
  switch (c.kind) {
    case config::ModelKind::kLlama: {
      const double heads = static_cast<double>(std::max<std::int64_t>(c.n_head, 1));
      const double kv = static_cast<double>(c.n_kv_head > 0 ? c.n_kv_head : c.n_head);
      const double d_ff = c.d_ff > 0 ? static_cast<double>(c.d_ff) : 8.0 / 3.0 * d;
      const double attention = 2 * d * d + 2 * d * (d * kv / heads);
      const double layer = attention + 3 * d * d_ff + 2 * d;
      return vocab * d * (c.tie_embeddings ? 1 : 2) + layers * layer + d;
    }
    case config::ModelKind::kMlp: return vocab * d * 2 + positions * d + layers * (8 * d * d + 7 * d);
    case config::ModelKind::kGpt:
    case config::ModelKind::kBert: break;
  }
  // GPT and BERT: token and position embeddings, 12 d^2 and 13 d a block,
  // the final norms (BERT's MLM head adds d^2: within the estimate).
  return vocab * d + positions * d + layers * (12 * d * d + 13 * d) + d * d + 4 * d;
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

void refuse_model_beyond_memory(const config::ModelConfig& c, std::int64_t vocab_size, double memory_bytes) {
  const double memory = memory_bytes > 0 ? memory_bytes : physical_memory_bytes();
  const double parameters = estimated_parameters(c, vocab_size);
  const double bytes = 4 * parameters;  // float32 weights alone; training needs about four times more
  if (memory <= 0 || bytes <= memory) return;
  throw std::runtime_error(fmt::format(
      "model: {} with d_model {}, n_layer {}, n_head {}{}, max_seq_len {} and a vocabulary of {} has about {:.3g} "
      "parameters, {:.1f} GB of float32 weights alone, more than this machine's {:.1f} GB of memory: nothing was "
      "allocated",
      config::name_of(c.kind), c.d_model, c.n_layer, c.n_head,
      c.kind == config::ModelKind::kLlama ? fmt::format(", d_ff {}", c.d_ff) : std::string(), c.max_seq_len, vocab_size,
      parameters, bytes / 1e9, memory / 1e9));
}

}  // namespace hpctrain::model
