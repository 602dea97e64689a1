#include "support/bounded_file.h"

#include <fmt/format.h>

#include <fstream>

namespace hpctrain::support {

std::string read_bounded_file(const std::filesystem::path& path, std::size_t max_bytes, const std::string& what) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(fmt::format("{}: no such {}", path.string(), what));
  if (!std::filesystem::is_regular_file(status)) {
    throw InputError(fmt::format("{}: not a regular file, so not a {}", path.string(), what));
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw InputError(fmt::format("{}: cannot read its size", path.string()));
  if (size > max_bytes) {
    throw InputError(
        fmt::format("{}: {} bytes, more than a {} may have ({} bytes)", path.string(), size, what, max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open", path.string()));
  // Read at most max_bytes + 1 even if the file grew since: a bound is a bound.
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.peek() != std::char_traits<char>::eof()) {
    throw InputError(fmt::format("{}: changed while being read", path.string()));
  }
  return text;
}

}  // namespace hpctrain::support
