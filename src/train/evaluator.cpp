#include "train/evaluator.h"

namespace hpctrain::train {

Evaluator::Evaluator(const config::Experiment& e, const data::Tokenizer& tokenizer)
    : eval_(e.eval),
      micro_batch_(e.training.micro_batch_size),
      bf16_(e.training.precision == config::Precision::kBf16),
      validation_(e.data.dir, "val", static_cast<std::size_t>(e.data.seq_len), tokenizer.hash()),
      masking_(data::make_mlm_masking(e.data, e.job.seed, tokenizer)) {}

EvalResult Evaluator::run(model::LanguageModel& model, comm::Communicator& comm) const {
  return evaluate(model, validation_, masking_, eval_.batches, micro_batch_, bf16_, comm);
}

}  // namespace hpctrain::train
