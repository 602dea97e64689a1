#include "support/bounded_file.h"

#include <fmt/format.h>

#include "support/input_file.h"

namespace hpctrain::support {

std::string read_bounded_file(const std::filesystem::path& path, std::size_t max_bytes, const std::string& what) {
  const InputFile file(path, what);
  const std::uint64_t size = file.size();
  if (size > max_bytes) {
    throw InputError(
        fmt::format("{}: {} bytes, more than a {} may have ({} bytes)", path.string(), size, what, max_bytes));
  }
  // Read one byte past the size seen: a file that grew since is refused, and
  // a bound stays a bound.
  std::string text = file.read_at(0, static_cast<std::size_t>(size) + 1);
  if (text.size() != size) throw InputError(fmt::format("{}: changed while being read", path.string()));
  return text;
}

}  // namespace hpctrain::support
