// Text from outside, put into messages: control characters shown as \xNN or
// \uNNNN (so an error stays one line and cannot forge another, move the
// cursor or reorder what a terminal shows), and an offset turned into the
// line:column an editor shows. Also durations as people read them.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hpctrain::support {

// C0 controls and DEL as \xNN; bytes that are not UTF-8 as \xNN (a lone
// 0x9B is CSI to a terminal in an 8-bit mode); the C1 controls U+0080 to
// U+009F, U+2028, U+2029 and the bidirectional controls (marks, overrides,
// isolates) as \uNNNN. Other
// UTF-8 text is kept.
std::string printable(std::string_view text);
// The same, line by line: newlines and tabs kept (a stored config shown whole).
std::string printable_lines(std::string_view text);

struct LineColumn {
  std::size_t line = 1;
  std::size_t column = 1;
};
// Of byte `offset` of `text`, both counted from 1.
LineColumn line_column(std::string_view text, std::size_t offset);

// "4m07s", or "2h05m" from an hour on: an ETA in a progress line or a table;
// "-" for a negative, non-finite or absurd (a million hours or more) value.
std::string format_duration(double seconds);

}  // namespace hpctrain::support
