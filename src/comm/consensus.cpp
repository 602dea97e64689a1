#include "comm/consensus.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace hpctrain::comm {

std::vector<std::string> allgather_strings(Communicator& comm, const std::string& mine, std::size_t max_bytes) {
  std::vector<char> send(max_bytes, '\0');
  std::memcpy(send.data(), mine.data(), std::min(mine.size(), max_bytes));
  std::vector<char> all(max_bytes * static_cast<std::size_t>(comm.size()), '\0');
  comm.allgather(send.data(), all.data(), max_bytes, DType::kUInt8);
  std::vector<std::string> out;
  for (int r = 0; r < comm.size(); ++r) {
    const char* begin = all.data() + static_cast<std::size_t>(r) * max_bytes;
    out.emplace_back(begin, strnlen(begin, max_bytes));
  }
  return out;
}

std::string broadcast_string(Communicator& comm, const std::string& value, int root) {
  auto length = static_cast<std::int64_t>(value.size());
  comm.broadcast(&length, 1, DType::kInt64, root);
  std::string out = comm.rank() == root ? value : std::string(static_cast<std::size_t>(length), '\0');
  if (length > 0) comm.broadcast(out.data(), out.size(), DType::kUInt8, root);
  return out;
}

void agree_or_throw(Communicator& comm, const std::optional<std::string>& local_error) {
  // A leading marker keeps an error with an empty text distinct from success.
  const auto all = allgather_strings(comm, local_error ? "!" + *local_error : std::string());
  int failures = 0;
  std::string first;
  for (int r = 0; r < comm.size(); ++r) {
    const std::string& s = all[static_cast<std::size_t>(r)];
    if (s.empty()) continue;
    if (failures++ == 0) first = fmt::format("rank {}: {}", r, s.substr(1));
  }
  if (failures == 0) return;
  if (failures > 1) first += fmt::format(" (and {} more rank{})", failures - 1, failures > 2 ? "s" : "");
  throw BootstrapError(first);
}

}  // namespace hpctrain::comm
