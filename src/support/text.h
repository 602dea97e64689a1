// Text from outside, put into messages: control characters shown as \xNN (so
// an error stays one line and cannot forge another), and an offset turned
// into the line:column an editor shows. Also durations as people read them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hpctrain::support {

std::string printable(std::string_view text);

struct LineColumn {
  std::size_t line = 1;
  std::size_t column = 1;
};
// Of byte `offset` of `text`, both counted from 1.
LineColumn line_column(std::string_view text, std::size_t offset);

// "4m07s", or "2h05m" from an hour on: an ETA in a progress line or a table.
std::string format_duration(double seconds);

}  // namespace hpctrain::support
