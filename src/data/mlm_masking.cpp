#include "data/mlm_masking.h"

#include "data/sampler.h"

namespace hpctrain::data {
namespace {

// A uniform double in [0, 1) from 53 random bits.
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

}  // namespace

MlmMasking make_mlm_masking(const config::DataConfig& data, std::uint64_t seed, const Tokenizer* tokenizer) {
  MlmMasking m;
  if (tokenizer == nullptr) return m;
  m.probability = data.mlm_probability;
  m.mask_fraction = data.mlm_mask_fraction;
  m.random_fraction = data.mlm_random_fraction;
  m.seed = seed;
  m.mask_id = Tokenizer::kMask;
  for (int id = 0; id < tokenizer->vocab_size(); ++id) m.special.push_back(tokenizer->is_special(id));
  return m;
}

void mask_tokens(const MlmMasking& m, std::uint64_t sample_id, std::int64_t* tokens, std::int64_t* labels,
                 std::size_t n) {
  const auto vocab = static_cast<std::uint64_t>(m.special.size());
  const std::uint64_t sample_key = mix64(m.seed ^ mix64(sample_id));
  for (std::size_t i = 0; i < n; ++i) {
    labels[i] = kIgnoreLabel;
    const std::int64_t original = tokens[i];
    if (original < 0 || static_cast<std::uint64_t>(original) >= vocab ||
        m.special[static_cast<std::size_t>(original)]) {
      continue;
    }
    std::uint64_t state = mix64(sample_key + i);
    if (unit(state) >= m.probability) continue;
    labels[i] = original;
    state = mix64(state);
    const double how = unit(state);
    if (how < m.mask_fraction) {
      tokens[i] = m.mask_id;
    } else if (how < m.mask_fraction + m.random_fraction) {
      std::int64_t replacement = 0;
      do {
        state = mix64(state);
        replacement = static_cast<std::int64_t>(state % vocab);
      } while (m.special[static_cast<std::size_t>(replacement)]);
      tokens[i] = replacement;
    }
  }
}

}  // namespace hpctrain::data
