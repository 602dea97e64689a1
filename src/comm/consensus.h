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

// Every rank's string, in rank order. Strings longer than `max_bytes` are cut.
std::vector<std::string> allgather_strings(Communicator& comm, const std::string& mine, std::size_t max_bytes = 1024);

// `value` as rank `root` has it, on every rank (length first, then the bytes).
std::string broadcast_string(Communicator& comm, const std::string& value, int root);

// Throws BootstrapError on every rank when any rank passes an error. The one
// message names every failing rank, grouped by error text in order of the lowest
// rank ("ranks 0, 2, 3: X; rank 1: Y"; runs of three or more as "4-7"), at
// most four texts, then a count.
void agree_or_throw(Communicator& comm, const std::optional<std::string>& local_error);

// Runs `step` on every rank and turns any rank's exception into the same
// BootstrapError everywhere, so that no rank goes on into a collective the
// failed one will never enter. Returns what `step` returned.
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
