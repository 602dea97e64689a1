// Text from files others write, shown in messages and tables: nothing in it
// may act on the terminal (C0 and C1 controls, bytes that are not UTF-8, line
// separators, bidirectional overrides), while ordinary UTF-8 stays readable.
// And figures from such files never reach a cast out of range.
#include "support/text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace hpctrain::support {
namespace {

TEST(Printable, ControlCharactersOfBothSetsAreEscaped) {
  EXPECT_EQ(printable("a\nb\x1b[2J\x7f"), "a\\x0ab\\x1b[2J\\x7f");
  // U+009B, the C1 CSI, as UTF-8: a terminal moves the cursor on it as on ESC [.
  EXPECT_EQ(printable("x\xc2\x9b"
                      "31m"),
            "x\\u009b31m");
  EXPECT_EQ(printable("\xc2\x80\xc2\x9f"), "\\u0080\\u009f");
  // The same byte alone is no UTF-8; an 8-bit terminal still takes it for CSI.
  EXPECT_EQ(printable("x\x9b"
                      "31m"),
            "x\\x9b31m");
}

TEST(Printable, BidirectionalOverridesAndLineSeparatorsAreEscaped) {
  EXPECT_EQ(printable("ok\xe2\x80\xae"
                      "txt.exe"),
            "ok\\u202etxt.exe");
  EXPECT_EQ(printable("\xe2\x81\xa6\xe2\x80\xa8"), "\\u2066\\u2028");
}

TEST(Printable, UnicodeTextIsKeptAndBrokenSequencesAreNot) {
  EXPECT_EQ(printable("größe µ 日本 \xf0\x9f\x99\x82"), "größe µ 日本 \xf0\x9f\x99\x82");
  EXPECT_EQ(printable("\xc3"), "\\xc3");                             // cut short
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(Printable, LineByLineKeepsNewlinesAndTabs) {
  EXPECT_EQ(printable_lines("[job]\n\tname = \"a\x1b\"\n"), "[job]\n\tname = \"a\\x1b\"\n");
  EXPECT_EQ(printable_lines(""), "");
}

TEST(FormatDuration, AbsurdFiguresFromElsewhereAreNoDuration) {
  EXPECT_EQ(format_duration(247), "4m07s");
  EXPECT_EQ(format_duration(7500), "2h05m");
  EXPECT_EQ(format_duration(1e308), "-");
  EXPECT_EQ(format_duration(-1), "-");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "-");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::infinity()), "-");
}

}  // namespace
}  // namespace hpctrain::support
