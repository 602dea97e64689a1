// Agreeing on local facts and local failures across ranks. A failure seen by one
// rank (an unresolvable head node on one node, say) must stop every rank with the
// same message, not leave the others waiting in the next collective.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
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

// Throws BootstrapError on every rank when any rank passes an error; the message
// quotes the lowest failing rank and counts the others.
void agree_or_throw(Communicator& comm, const std::optional<std::string>& local_error);

}  // namespace hpctrain::comm
