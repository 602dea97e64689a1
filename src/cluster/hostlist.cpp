// Hostlist grammar, following Slurm (src/common/hostlist.c):
//  - tokens are separated by commas or whitespace outside brackets;
//  - a token's bracket groups form a product, the last group varying fastest,
//    then the first, second, ... ("rack[1-2]n[1-3]" is six hosts, "a[1-2]-b[3-4]" four);
//  - text after the last group is a suffix of every name ("tux[1-2]-ib" is
//    tux1-ib tux2-ib, "node-[0-1].cluster" node-0.cluster node-1.cluster).
//    Slurm 24.11 reads it so and sets SLURM_JOB_NODELIST so for nodes named
//    that way; Slurm 22.05 refused it, so the wider reading loses nothing;
//  - a range's zero padding is the width of its low bound ("n[08-10]").
// We are stricter than Slurm in two places, where Slurm silently produces a
// mangled name: unbalanced or nested brackets ("n[1-2" gives Slurm "n]"), and
// bounds that are not plain digits (strtoul lets "n[ 1-2]" give "n01 n02").
#include "cluster/hostlist.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "cluster/error.h"

namespace hpctrain::cluster {
namespace {

// Slurm refuses ranges larger than this (MAX_RANGE in hostlist.c).
constexpr unsigned long kMaxRangeHosts = 64UL * 1024UL;
// Guards against expressions that would expand to millions of names, or to
// names so long that a few of them exhaust memory (a long prefix times a
// range, huge zero padding, chained bracket groups): both are checked before
// a single name is built.
constexpr std::size_t kMaxHosts = 1UL << 20;
constexpr std::size_t kMaxBytes = std::size_t{64} << 20;

struct Range {
  unsigned long lo = 0;
  unsigned long hi = 0;
  int width = 0;
};

[[noreturn]] void reject(std::string_view expression, const std::string& why) {
  throw ClusterError(fmt::format("invalid hostlist '{}': {}", expression, why));
}

bool is_separator(char c) { return c == ',' || c == ' ' || c == '\t' || c == '\n'; }

std::vector<std::string_view> split_tokens(std::string_view expression) {
  std::vector<std::string_view> tokens;
  int depth = 0;
  std::size_t start = std::string_view::npos;
  for (std::size_t i = 0; i < expression.size(); ++i) {
    const char c = expression[i];
    if (c == '[') {
      if (depth > 0) reject(expression, fmt::format("nested '[' at column {}", i + 1));
      ++depth;
    } else if (c == ']') {
      if (depth == 0) reject(expression, fmt::format("']' without '[' at column {}", i + 1));
      --depth;
    }
    if (depth == 0 && is_separator(c)) {
      if (start != std::string_view::npos) tokens.push_back(expression.substr(start, i - start));
      start = std::string_view::npos;
    } else if (start == std::string_view::npos) {
      start = i;
    }
  }
  if (depth != 0) reject(expression, "'[' is never closed");
  if (start != std::string_view::npos) tokens.push_back(expression.substr(start));
  return tokens;
}

unsigned long parse_bound(std::string_view expression, std::string_view digits) {
  unsigned long value = 0;
  const auto* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  if (digits.empty() || ec != std::errc() || ptr != end) {
    reject(expression, fmt::format("'{}' is not a number", digits));
  }
  return value;
}

Range parse_range(std::string_view expression, std::string_view text) {
  Range range;
  const auto dash = text.find('-');
  const std::string_view lo = text.substr(0, dash);
  range.width = static_cast<int>(lo.size());
  range.lo = parse_bound(expression, lo);
  range.hi = range.lo;
  // Slurm reads "1-" as "1": an empty high bound repeats the low one.
  if (dash != std::string_view::npos && dash + 1 < text.size()) {
    range.hi = parse_bound(expression, text.substr(dash + 1));
  }
  if (range.lo > range.hi) reject(expression, fmt::format("range '{}' runs backwards", text));
  if (range.hi - range.lo >= kMaxRangeHosts) {  // hi - lo + 1 would wrap at 2^64 - 1
    reject(expression, fmt::format("range '{}' has more than {} hosts", text, kMaxRangeHosts));
  }
  return range;
}

std::vector<Range> parse_range_list(std::string_view expression, std::string_view list) {
  std::vector<Range> ranges;
  std::size_t start = 0;
  while (true) {
    const auto comma = list.find(',', start);
    ranges.push_back(parse_range(expression, list.substr(start, comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return ranges;
}

// One bracket group's numbers, as they are printed.
std::vector<std::string> group_values(std::string_view expression, std::string_view list, std::size_t& count,
                                      std::size_t& bytes) {
  std::vector<std::string> values;
  for (const Range& r : parse_range_list(expression, list)) {
    // Counting up to the span avoids n <= hi; ++n, which never ends at hi = 2^64 - 1.
    const unsigned long span = r.hi - r.lo;
    if (count + span >= kMaxHosts) reject(expression, fmt::format("more than {} hosts", kMaxHosts));
    const std::size_t each = std::max<std::size_t>(static_cast<std::size_t>(r.width), 20) + 32;
    if (span + 1 > (kMaxBytes - bytes) / each) {
      reject(expression, fmt::format("its host names would take more than {} MiB", kMaxBytes >> 20));
    }
    bytes += (span + 1) * each;
    for (unsigned long k = 0; k <= span; ++k) values.push_back(fmt::format("{:0{}}", r.lo + k, r.width));
    count += span + 1;
  }
  return values;
}

// One token: literal text and bracket groups, then an optional literal
// suffix. The product is ordered as Slurm orders it: the last group varies
// fastest, then the first, the second, ..., the next-to-last slowest.
void expand_token(std::string_view expression, std::string_view token, std::vector<std::string>& hosts,
                  std::size_t& bytes) {
  std::vector<std::string> literals;  // before each group; literals.size() == groups.size()
  std::vector<std::vector<std::string>> groups;
  std::size_t at = 0;
  std::size_t values = 0;
  std::size_t value_bytes = 0;
  std::string_view suffix;
  while (at < token.size()) {
    const auto open = token.find('[', at);
    if (open == std::string_view::npos) {
      suffix = token.substr(at);
      break;
    }
    const auto close = token.find(']', open);
    literals.emplace_back(token.substr(at, open - at));
    groups.push_back(group_values(expression, token.substr(open + 1, close - open - 1), values, value_bytes));
    at = close + 1;
  }
  // The size of the product, before building it.
  std::size_t count = 1;
  std::size_t length = 1 + suffix.size();  // a name and its share of the vector
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (count > kMaxHosts / groups[g].size()) reject(expression, fmt::format("more than {} hosts", kMaxHosts));
    count *= groups[g].size();
    std::size_t widest = 0;
    for (const auto& v : groups[g]) widest = std::max(widest, v.size());
    length += literals[g].size() + widest;
  }
  if (hosts.size() + count > kMaxHosts) reject(expression, fmt::format("more than {} hosts", kMaxHosts));
  if (length > kMaxBytes / count || bytes + count * length > kMaxBytes) {
    reject(expression, fmt::format("its host names would take more than {} MiB", kMaxBytes >> 20));
  }
  bytes += count * length;
  // An odometer over the groups, least significant first: the last group, then the first, second, ...
  std::vector<std::size_t> order;
  order.push_back(groups.size() - 1);
  for (std::size_t g = 0; g + 1 < groups.size(); ++g) order.push_back(g);
  std::vector<std::size_t> digit(groups.size(), 0);
  for (std::size_t n = 0; n < count; ++n) {
    std::string host;
    host.reserve(length);
    for (std::size_t g = 0; g < groups.size(); ++g) host.append(literals[g]).append(groups[g][digit[g]]);
    host.append(suffix);
    hosts.push_back(std::move(host));
    for (const std::size_t g : order) {
      if (++digit[g] < groups[g].size()) break;
      digit[g] = 0;
    }
  }
}

// A host name split as Slurm does: a prefix and an optional numeric suffix.
struct HostName {
  std::string prefix;
  bool numeric = false;
  unsigned long number = 0;
  int width = 0;
};

HostName split_host(const std::string& host) {
  HostName name{host, false, 0, 0};
  std::size_t digits_start = host.size();
  while (digits_start > 0 && host[digits_start - 1] >= '0' && host[digits_start - 1] <= '9') --digits_start;
  const std::size_t digits = host.size() - digits_start;
  // Slurm only treats a suffix as numeric while it fits in an unsigned long.
  if (digits == 0 || digits > 18) return name;
  name.prefix = host.substr(0, digits_start);
  name.numeric = true;
  name.number = std::stoul(host.substr(digits_start));
  name.width = static_cast<int>(digits);
  return name;
}

// Leading zeros `number` gets when printed with `width` digits.
int zero_padding(unsigned long number, int width) {
  int digits = 1;
  while ((number /= 10) != 0) ++digits;
  return width > digits ? width - digits : 0;
}

// Slurm's _width_equiv: "n9" and "n10" may share a range, "n01" and "n2" may not.
bool equivalent_widths(unsigned long n, int& wn, unsigned long m, int& wm) {
  if (wn == wm) return true;
  const bool n_changes = zero_padding(n, wn) != zero_padding(n, wm);
  const bool m_changes = zero_padding(m, wm) != zero_padding(m, wn);
  if (n_changes && m_changes) return false;
  if (n_changes) {
    wm = wn;
  } else {
    wn = wm;
  }
  return true;
}

std::string format_range(const HostName& first, unsigned long hi) {
  if (first.number == hi) return fmt::format("{:0{}}", first.number, first.width);
  return fmt::format("{:0{}}-{:0{}}", first.number, first.width, hi, first.width);
}

}  // namespace

std::vector<std::string> expand_hostlist(std::string_view expression) {
  std::vector<std::string> hosts;
  std::size_t bytes = 0;
  for (std::string_view token : split_tokens(expression)) {
    if (token.find('[') == std::string_view::npos) {
      if (hosts.size() >= kMaxHosts) reject(expression, fmt::format("more than {} hosts", kMaxHosts));
      if ((bytes += token.size() + 1) > kMaxBytes) {
        reject(expression, fmt::format("its host names would take more than {} MiB", kMaxBytes >> 20));
      }
      hosts.emplace_back(token);
      continue;
    }
    expand_token(expression, token, hosts, bytes);
  }
  return hosts;
}

std::string compress_hostlist(const std::vector<std::string>& hosts) {
  struct Run {
    HostName first;
    unsigned long hi;
  };
  std::vector<Run> runs;
  for (const std::string& host : hosts) {
    HostName name = split_host(host);
    if (!runs.empty() && name.numeric && runs.back().first.numeric && runs.back().first.prefix == name.prefix &&
        runs.back().hi + 1 == name.number &&
        equivalent_widths(runs.back().first.number, runs.back().first.width, name.number, name.width)) {
      runs.back().hi = name.number;
      continue;
    }
    const unsigned long hi = name.number;
    runs.push_back({std::move(name), hi});
  }

  std::string out;
  for (std::size_t i = 0; i < runs.size();) {
    if (!out.empty()) out += ',';
    const HostName& head = runs[i].first;
    if (!head.numeric) {
      out += head.prefix;
      ++i;
      continue;
    }
    std::size_t end = i + 1;
    while (end < runs.size() && runs[end].first.numeric && runs[end].first.prefix == head.prefix) ++end;
    const bool bracket = end - i > 1 || runs[i].hi != head.number;
    out += head.prefix;
    if (bracket) out += '[';
    for (std::size_t j = i; j < end; ++j) {
      if (j > i) out += ',';
      out += format_range(runs[j].first, runs[j].hi);
    }
    if (bracket) out += ']';
    i = end;
  }
  return out;
}

}  // namespace hpctrain::cluster
