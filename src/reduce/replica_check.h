// The replica-divergence check: data parallelism assumes every rank holds the
// same weights. Every K steps each rank hashes each parameter; the hashes are
// gathered, and a mismatch stops training with an error naming the first
// differing parameter and the ranks that disagree with rank 0.
#pragma once

#include <stdexcept>

#include "comm/communicator.h"
#include "model/language_model.h"

namespace hpctrain::reduce {

class ReplicaDivergence : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check_replicas(const model::LanguageModel& model, comm::Communicator& comm, std::int64_t step);

}  // namespace hpctrain::reduce
