// Encoding a value for the place it lands in a batch script (DESIGN §7).
// sbatch reads #SBATCH lines with its own parser: quotes group words, an
// unquoted # ends the line, a backslash escapes the next character (even in
// single quotes), $VAR stays literal. So a directive value is written in double
// quotes with \ and " escaped. A word on a shell line is POSIX single-quoted.
// A value that must expand at run time is typed as such in the experiment and
// may expand variables only. Control characters are refused everywhere: a
// newline in a value could start a new directive or command.
#pragma once

#include <stdexcept>
#include <string>

namespace hpctrain::jobgen {

class EncodingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws EncodingError naming `field` when `value` holds a control character.
void refuse_control_characters(const std::string& value, const std::string& field);

// `value` with control characters shown as \xNN: for comments and messages.
std::string printable(const std::string& value);

// "value", for `#SBATCH --flag=<here>`.
std::string sbatch_value(const std::string& value, const std::string& field);

// 'value', one shell word taken literally.
std::string shell_word(const std::string& value, const std::string& field);

// "value" with $VAR and ${VAR} expanding at run time and nothing else: command
// substitution ($( or `) is refused, \ and " are escaped.
std::string shell_expanding(const std::string& value, const std::string& field);

}  // namespace hpctrain::jobgen
