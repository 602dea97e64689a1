// Agreeing on local facts and local failures across ranks. A failure seen by one
// rank (an unresolvable head node on one node, say) must stop every rank with the
// same message, not leave the others waiting in the next collective.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "comm/communicator.h"

namespace hpctrain::comm {

class BootstrapError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure every rank of the world throws at the same point, right after the
// allgather that told them all of it (agree_or_throw): no rank is left inside
// a collective, so MPI may be finalized before the process ends (see
// cli/agreed_failure.h for why that matters).
class AgreedError : public BootstrapError {
 public:
  using BootstrapError::BootstrapError;
};

// Every rank's string, in rank order. Strings longer than `max_bytes` are cut.
std::vector<std::string> allgather_strings(Communicator& comm, const std::string& mine, std::size_t max_bytes = 1024);

// `value` as rank `root` has it, on every rank (length first, then the bytes).
std::string broadcast_string(Communicator& comm, const std::string& value, int root);

// Throws AgreedError on every rank when any rank passes an error. The one
// message names every failing rank, grouped by error text in order of the lowest
// rank ("ranks 0, 2, 3: X; rank 1: Y"; runs of three or more as "4-7"), at
// most four texts, then a count.
void agree_or_throw(Communicator& comm, const std::optional<std::string>& local_error);

// Runs `step` on every rank and turns any rank's exception into the same
// AgreedError everywhere, so that no rank goes on into a collective the
// failed one will never enter. Returns what `step` returned. `comm` must span
// the world for the error to be an AgreedError in the world's sense; every
// caller passes the world's communicator or a duplicate of it.
template <typename Step>
auto on_all_ranks(Communicator& comm, Step&& step) {
  using Result = decltype(step());
  if constexpr (std::is_void_v<Result>) {
    std::optional<std::string> error;
    try {
      step();
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "an exception that is not a std::exception";
    }
    agree_or_throw(comm, error);
  } else {
    std::optional<Result> result;
    on_all_ranks(comm, [&] { result.emplace(step()); });
    return std::move(*result);
  }
}

// "0, 2-4, 7": ranks in ascending order, runs of three or more as ranges.
std::string rank_ranges(std::vector<int> ranks);

}  // namespace hpctrain::comm
