#include "train/evaluator.h"

#include "data/eval_sample.h"

namespace hpctrain::train {
namespace {

std::vector<std::uint64_t> every_sequence(const data::TokenDataset& split) {
  return data::spread_sample(split.size(), split.size(), 0);
}

}  // namespace

Evaluator::Evaluator(const config::Experiment& e, const data::Tokenizer* tokenizer)
    : eval_(e.eval),
      micro_batch_(e.training.micro_batch_size),
      bf16_(e.training.precision == config::Precision::kBf16),
      validation_(e.data.dir, "val", static_cast<std::size_t>(e.data.seq_len), tokenizer ? tokenizer->hash() : ""),
      masking_(data::make_mlm_masking(e.data, e.job.seed, tokenizer)),
      sample_(data::spread_sample(validation_.size(), static_cast<std::uint64_t>(e.eval.samples), e.job.seed)) {
  if (e.data.has_test_split() && e.eval.test) {
    test_.emplace(e.data.dir, "test", static_cast<std::size_t>(e.data.seq_len), tokenizer ? tokenizer->hash() : "");
  }
}

SequenceScores Evaluator::score(model::LanguageModel& model, const data::TokenDataset& split,
                                const std::vector<std::uint64_t>& indices, comm::Communicator& comm) const {
  return score_sequences(model, split, indices, masking_, micro_batch_, bf16_, comm);
}

Evaluation Evaluator::periodic(model::LanguageModel& model, comm::Communicator& comm) const {
  return {summarize(score(model, validation_, sample_, comm)), std::nullopt};
}

EvalResult Evaluator::full(model::LanguageModel& model, comm::Communicator& comm) const {
  return summarize(score(model, validation_, every_sequence(validation_), comm));
}

Evaluation Evaluator::final(model::LanguageModel& model, comm::Communicator& comm) const {
  if (eval_.final_eval == config::EvalFinal::kSample) return periodic(model, comm);
  const SequenceScores all = score(model, validation_, every_sequence(validation_), comm);
  return {summarize(all, sample_), summarize(all)};
}

std::optional<EvalResult> Evaluator::test(model::LanguageModel& model, comm::Communicator& comm) const {
  if (!test_) return std::nullopt;
  return summarize(score(model, *test_, every_sequence(*test_), comm));
}

}  // namespace hpctrain::train
