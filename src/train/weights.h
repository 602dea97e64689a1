// Whole-model operations on the weights: the SHA-256 that proves two runs
// bit-identical, and the start-of-run broadcast from rank 0 (DDAP; DDP's
// reducer broadcasts itself).
#pragma once

#include <string>

#include "comm/communicator.h"
#include "model/language_model.h"

namespace hpctrain::train {

// SHA-256 over every parameter's name and raw bytes, in registration order.
std::string weights_sha256(const model::LanguageModel& model);

// Every rank ends with rank 0's parameters.
void broadcast_parameters(model::LanguageModel& model, comm::Communicator& comm);

}  // namespace hpctrain::train
