// Whole-model operations on the weights: the SHA-256 that proves two runs
// bit-identical, and the start-of-run broadcast from rank 0.
#pragma once

#include <string>

#include "comm/communicator.h"
#include "model/language_model.h"

namespace hpctrain::train {

// SHA-256 over every parameter's name and raw bytes, in registration order.
std::string weights_sha256(const model::LanguageModel& model);

// Every rank ends with rank 0's parameters.
void broadcast_parameters(model::LanguageModel& model, comm::Communicator& comm);

// Averages every parameter's gradient over the ranks (one flat allreduce).
void average_gradients(model::LanguageModel& model, comm::Communicator& comm);

}  // namespace hpctrain::train
