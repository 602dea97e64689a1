// The start-of-run broadcast that makes every replica rank 0's.
#pragma once

#include "comm/communicator.h"
#include "model/language_model.h"

namespace hpctrain::reduce {

// Every rank ends with rank 0's parameters.
void broadcast_parameters(model::LanguageModel& model, comm::Communicator& comm);

}  // namespace hpctrain::reduce
