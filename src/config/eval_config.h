// [eval]: when and what evaluations read, and the sample printed at the end.
#pragma once

#include <cstdint>
#include <string>

#include "config/choices.h"

namespace hpctrain::config {

class SectionReader;

// What the final evaluation reads: every sequence of the validation split, or
// the same sample as the periodic evaluations.
enum class EvalFinal { kFull, kSample };

template <>
struct ChoiceTable<EvalFinal> {
  static constexpr std::array<Choice<EvalFinal>, 2> entries{
      {{"full", EvalFinal::kFull}, {"sample", EvalFinal::kSample}}};
};

struct EvalConfig {
  std::int64_t interval = 200;  // steps between evaluations (0: only at the end)
  // Sequences of the validation split in every periodic evaluation, all ranks
  // together: the same seeded sample, spread over the whole split, at every
  // evaluation and every world size (data/eval_sample.h). The whole split
  // when it has fewer.
  std::int64_t samples = 512;
  EvalFinal final_eval = EvalFinal::kFull;
  // At the very end, also the whole test split, when the data set has one (data.test_fraction).
  bool test = true;
  std::string prompt = "def ";  // GPT: the sample printed at the end starts here
  std::int64_t sample_tokens = 64;
  double temperature = 0.8;
  std::int64_t top_k = 40;
  // `batches` (validation micro-batches per rank) from experiments and
  // checkpoints made before eval.samples: accepted, ignored, and reported.
  bool retired_batches = false;

  // After step `step` (counted from 1): every `interval` steps, and after the last.
  [[nodiscard]] bool should_eval(std::int64_t step, bool last) const {
    return last || (interval > 0 && step % interval == 0);
  }

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static EvalConfig read(SectionReader section);
};

}  // namespace hpctrain::config
