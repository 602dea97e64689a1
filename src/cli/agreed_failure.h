// Ending a command cleanly when every rank failed together. A failure one rank
// saw and all ranks then agreed on (comm::AgreedError: a bad data set, an
// unresolvable head node, a checkpoint no rank could write) leaves no rank
// inside a collective, so MPI can be finalized before the error reaches the
// program's edge. It must be: MPICH 4.2's mpiexec reports status 0 for about
// a third of the jobs whose ranks all exit 1 without MPI_Finalize (MPICH 4.0's
// reports 1), so a failed run would look like a successful one. Any other
// exception still skips MPI_Finalize (handles/mpi.h says why).
#pragma once

#include <fmt/format.h>

#include <utility>

#include "comm/consensus.h"
#include "handles/mpi.h"

namespace hpctrain::cli {

// Runs `body`, which owns everything that communicates (the World, the
// trainer): it is gone before MPI is finalized. Returns what `body` returns.
template <typename Body>
auto finalize_after_agreed_failure(handles::MpiRuntime& mpi, Body&& body) -> decltype(body()) {
  try {
    return std::forward<Body>(body)();
  } catch (const comm::AgreedError& e) {
    mpi.finalize(1, fmt::format("the run failed on every rank: {}", e.what()));
    throw;
  }
}

}  // namespace hpctrain::cli
