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

std::string rank_ranges(std::vector<int> ranks) {
  std::sort(ranks.begin(), ranks.end());
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    if (j - i >= 2) {
      out += fmt::format("{}-{}", ranks[i], ranks[j]);
    } else {
      for (std::size_t k = i; k <= j; ++k) out += fmt::format("{}{}", k == i ? "" : ", ", ranks[k]);
    }
    i = j + 1;
  }
  return out;
}

void agree_or_throw(Communicator& comm, const std::optional<std::string>& local_error) {
  // A leading marker keeps an error with an empty text distinct from success.
  const auto all = allgather_strings(comm, local_error ? "!" + *local_error : std::string());
  // Error texts in order of their lowest rank, each with the ranks that saw it.
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (int r = 0; r < comm.size(); ++r) {
    const std::string& s = all[static_cast<std::size_t>(r)];
    if (s.empty()) continue;
    auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == s; });
    if (group == groups.end()) group = groups.insert(groups.end(), {s, {}});
    group->second.push_back(r);
  }
  if (groups.empty()) return;
  constexpr std::size_t kShown = 4;  // a thousand ranks with a thousand texts must still give one readable line
  std::string message;
  int unshown = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto& [text, ranks] = groups[i];
    if (i >= kShown) {
      unshown += static_cast<int>(ranks.size());
      continue;
    }
    message += fmt::format("{}rank{} {}: {}", i == 0 ? "" : "; ", ranks.size() == 1 ? "" : "s", rank_ranges(ranks),
                           text.substr(1));
  }
  if (unshown > 0) message += fmt::format(" (and {} more rank{} with other errors)", unshown, unshown == 1 ? "" : "s");
  throw AgreedError(message);
}

}  // namespace hpctrain::comm
