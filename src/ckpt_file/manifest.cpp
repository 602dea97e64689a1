#include "ckpt_file/manifest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <map>

namespace hpctrain::ckpt_file {
namespace {

// "attribute config" or "dataset model/x": what a line is about.
std::string item_of(const std::string& line) {
  const auto first = line.find(' ');
  const auto second = first == std::string::npos ? std::string::npos : line.find(' ', first + 1);
  return line.substr(0, second);
}

std::map<std::string, std::string> by_item(const std::string& text) {
  std::map<std::string, std::string> items;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    items[item_of(line)] = line;
    start = end + 1;
  }
  return items;
}

}  // namespace

void Manifest::attribute(const std::string& name, std::int64_t value) {
  lines_.push_back(fmt::format("attribute {} int {}", name, value));
}

void Manifest::attribute(const std::string& name, double value) {
  lines_.push_back(fmt::format("attribute {} real 0x{:016x}", name, std::bit_cast<std::uint64_t>(value)));
}

void Manifest::attribute(const std::string& name, const std::string& value) {
  lines_.push_back(fmt::format("attribute {} string sha256:{}", name, support::to_hex(support::sha256(value))));
}

void Manifest::dataset(const std::string& name, ElementType type, const std::vector<std::int64_t>& shape,
                       const support::Digest& digest) {
  lines_.push_back(fmt::format("dataset {} {} {} sha256:{}", name, element_name(type), fmt::join(shape, "x"),
                               support::to_hex(digest)));
}

std::string Manifest::text() const {
  std::vector<std::string> sorted = lines_;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (const auto& line : sorted) out += line + "\n";
  return out;
}

std::vector<std::string> manifest_attribute_names(const std::string& stored) {
  std::vector<std::string> names;
  for (const auto& [item, line] : by_item(stored)) {
    if (item.rfind("attribute ", 0) == 0) names.push_back(item.substr(10));
  }
  return names;
}

std::vector<std::string> manifest_differences(const std::string& stored, const std::string& actual, std::size_t limit) {
  const auto want = by_item(stored);
  const auto have = by_item(actual);
  std::vector<std::string> out;
  auto note = [&](std::string line) {
    if (out.size() < limit) out.push_back(std::move(line));
  };
  for (const auto& [item, line] : have) {
    const auto it = want.find(item);
    if (it == want.end()) {
      note(fmt::format("{}: not in the manifest", item));
    } else if (it->second != line) {
      note(fmt::format("{}: differs from the manifest", item));
    }
  }
  for (const auto& [item, line] : want) {
    if (have.count(item) == 0) note(fmt::format("{}: in the manifest, missing from the file", item));
  }
  return out;
}

}  // namespace hpctrain::ckpt_file
