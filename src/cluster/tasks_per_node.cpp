#include "cluster/tasks_per_node.h"

#include <fmt/format.h>

#include "cluster/error.h"
#include "cluster/parse_int.h"

namespace hpctrain::cluster {
namespace {

constexpr int kMaxRepeat = 1 << 20;

int parse_count(std::string_view text, std::string_view value, std::string_view variable) {
  const auto n = parse_non_negative(text);
  if (!n) {
    throw ClusterError(
        fmt::format("{}='{}': '{}' is not a task count (expected e.g. '2(x3),1')", variable, value, text));
  }
  return *n;
}

}  // namespace

std::vector<int> parse_tasks_per_node(std::string_view value, std::string_view variable) {
  if (value.empty()) throw ClusterError(fmt::format("{} is empty (expected e.g. '2(x3),1')", variable));
  std::vector<int> counts;
  std::size_t start = 0;
  while (start <= value.size()) {
    const auto comma = value.find(',', start);
    std::string_view item = value.substr(start, comma - start);
    int repeat = 1;
    if (const auto paren = item.find('('); paren != std::string_view::npos) {
      if (item.size() < paren + 4 || item.substr(paren, 2) != "(x" || item.back() != ')') {
        throw ClusterError(fmt::format("{}='{}': malformed repeat '{}' (expected 'N(xR)')", variable, value, item));
      }
      repeat = parse_count(item.substr(paren + 2, item.size() - paren - 3), value, variable);
      if (repeat == 0 || repeat > kMaxRepeat) {
        throw ClusterError(fmt::format("{}='{}': repeat count in '{}' out of range", variable, value, item));
      }
      item = item.substr(0, paren);
    }
    counts.insert(counts.end(), static_cast<std::size_t>(repeat), parse_count(item, value, variable));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return counts;
}

}  // namespace hpctrain::cluster
