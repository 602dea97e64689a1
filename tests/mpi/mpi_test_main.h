// The MPI runtime shared by every test in a multi-rank GoogleTest binary.
#pragma once

#include "handles/mpi.h"

namespace hpctrain::testing {

const handles::MpiRuntime& mpi_runtime();

}  // namespace hpctrain::testing
