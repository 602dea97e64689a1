// BERT-style masking for masked-language-model batches: each non-special token
// is chosen with probability p (default 15%); a chosen token becomes <mask> with
// probability mask_fraction (80%), a random non-special token with
// random_fraction (10%), and stays as it is otherwise (10%). Labels hold the
// original token where chosen and -100 (ignored) elsewhere. The decisions are a
// pure function of (seed, sample id, position), so they do not depend on the
// world size or on the order samples are processed in.
#pragma once

#include <cstdint>
#include <vector>

#include "config/experiment.h"
#include "data/tokenizer.h"

namespace hpctrain::data {

constexpr std::int64_t kIgnoreLabel = -100;

// Built by make_mlm_masking from [data] (whose defaults are 15%, 80%, 10%).
struct MlmMasking {
  double probability = 0;
  double mask_fraction = 0;
  double random_fraction = 0;
  std::uint64_t seed = 0;
  std::int64_t mask_id = Tokenizer::kMask;
  std::vector<bool> special;  // by token id: never chosen, never a random replacement
};

// The masking [data] configures, for a tokenizer's special pieces; none
// (probability 0) without a tokenizer: token files with no data.tokenizer,
// which only a causal model trains on.
MlmMasking make_mlm_masking(const config::DataConfig& data, std::uint64_t seed, const Tokenizer* tokenizer);

// Masks `tokens[0..n)` in place and writes `labels[0..n)`.
void mask_tokens(const MlmMasking& masking, std::uint64_t sample_id, std::int64_t* tokens, std::int64_t* labels,
                 std::size_t n);

}  // namespace hpctrain::data
