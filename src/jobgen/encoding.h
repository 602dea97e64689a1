// Encoding a value for the place it lands in a batch script.
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

#include "support/text.h"

namespace hpctrain::jobgen {

class EncodingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws EncodingError naming `field` when `value` holds a control character.
void refuse_control_characters(const std::string& value, const std::string& field);

// For comments and messages: control characters shown as \xNN.
using support::printable;

// "value", for `#SBATCH --flag=<here>`.
std::string sbatch_value(const std::string& value, const std::string& field);

// 'value', one shell word taken literally.
std::string shell_word(const std::string& value, const std::string& field);

// "value" with $NAME and ${NAME} expanding at run time and nothing else: the
// value must be literal text, $NAME and ${NAME} (NAME = [A-Za-z_][A-Za-z0-9_]*),
// so no parameter operator (${X@P}, ${X:=...}, ${a[...]}), command
// substitution or arithmetic can reach bash; each expansion is written back
// as ${NAME}, and \ and " are escaped.
std::string shell_expanding(const std::string& value, const std::string& field);

}  // namespace hpctrain::jobgen
