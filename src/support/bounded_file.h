// Reading a whole file that came from outside, with its size bounded before a
// byte is read: a device (/dev/zero), a FIFO, a directory or a file larger
// than the caller allows is refused, so no input makes a tool read forever or
// allocate what the file claims.
#pragma once

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace hpctrain::support {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The file's bytes; throws InputError "PATH: ..." naming `what` ("template",
// "tokenizer model") when it is not a regular file or has more than `max_bytes`.
std::string read_bounded_file(const std::filesystem::path& path, std::size_t max_bytes, const std::string& what);

}  // namespace hpctrain::support
