// TOML from outside is bounded before toml++ parses it: the depth scanner
// must never count less than the parser nests (strings and comments hide
// brackets and dots), and must leave every ordinary experiment alone.
#include "config/toml_input.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/config_error.h"

namespace hpctrain::config {
namespace {

std::string nested_header(int depth) {
  std::string keys = "a";
  for (int i = 1; i < depth; ++i) keys += ".a";
  return "[" + keys + "]\nx = 1\n";
}

std::string error_of(const std::string& text) {
  try {
    check_toml_limits(text, "t.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TomlLimits, EveryKindOfNestingCountsTowardsTheBound) {
  EXPECT_EQ(error_of(nested_header(kMaxTomlDepth)), "no error");
  EXPECT_EQ(error_of(nested_header(kMaxTomlDepth + 1)),
            "t.toml:1:65: tables, keys, arrays and inline tables nest deeper than 32");
  std::string dotted = "a";
  for (int i = 0; i < 40; ++i) dotted += ".b";
  EXPECT_NE(error_of(dotted + " = 1\n"), "no error");
  EXPECT_NE(error_of("[t]\nx = " + std::string(40, '[') + std::string(40, ']') + "\n"), "no error");
  std::string inline_tables = "x = ";
  for (int i = 0; i < 40; ++i) inline_tables += "{a = ";
  EXPECT_NE(error_of(inline_tables + "1" + std::string(40, '}') + "\n"), "no error");
  // Depth adds up across kinds: a table 20 deep holding a value 20 deep.
  EXPECT_NE(error_of(nested_header(20) + "y = " + std::string(20, '[') + std::string(20, ']') + "\n"), "no error");
}

TEST(TomlLimits, StringsAndCommentsHideWhatLooksLikeNesting) {
  const std::string brackets(200, '[');
  EXPECT_EQ(error_of("a = \"" + brackets + "\"\nb = '" + brackets + "'\n# " + brackets + "\n"), "no error");
  EXPECT_EQ(error_of("a = \"\"\"\n" + brackets + "\n\"\"\"\nb = '''" + brackets + "'''\n"), "no error");
  EXPECT_EQ(error_of("\"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.A.B.C.D.E.F.G\" = 1\n"), "no error");
  EXPECT_EQ(
      error_of("x = [" + std::string(300, '1') +
               "]\nlr = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 1.5, 1.5, "
               "1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, "
               "1.5, 1.5, 1.5, 1.5]\n"),
      "no error");
  // A quote inside a string does not end it early and open a new one.
  EXPECT_EQ(error_of("a = \"x\\\"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"\n"), "no error");
}

TEST(TomlLimits, SizeAndNulAreRefusedBeforeParsing) {
  EXPECT_NE(error_of(std::string(kMaxTomlBytes + 1, ' ')), "no error");
  EXPECT_EQ(error_of(std::string("a = 1\n\0b = 2\n", 13)), "t.toml: a NUL byte at offset 6 (not TOML text)");
}

// toml++ 3.3 assumes a table header's key starts with a key character or a
// quote (an assertion, or undefined behaviour in clang's release builds):
// found by the experiment fuzz harness on "[# Quicm".
TEST(TomlLimits, ATableHeaderMustStartWithAKey) {
  EXPECT_EQ(error_of("[# Quicm"), "t.toml:1:2: a table header must start with a key, not '#'");
  EXPECT_EQ(error_of("[t]\nx = 1\n[[ [a]]]\n"), "t.toml:3:4: a table header must start with a key, not '['");
  EXPECT_NE(error_of("[[[1]]]"), "no error");
  EXPECT_NE(error_of("[\n"), "no error");
  EXPECT_EQ(error_of("[ a]\n[[\t\"b\"]]\n['c']\n[-]\n[]\n"), "no error");  // [] is the parser's to refuse
}

// Two more of toml++ 3.3's assumptions the fuzzers reached: its whitespace
// test on most of U+00A1..U+0499 reaches __builtin_unreachable, and an array
// closed by '}' fails an assertion.
TEST(TomlLimits, NonAsciiOnlyInStringsAndCommentsAndClosersMatch) {
  EXPECT_EQ(error_of("[t]\nx = 1\xc2\xa1\n"),
            "t.toml:2:6: a non-ASCII character outside a string or comment (TOML allows them only there)");
  EXPECT_NE(error_of("\xc2\xa1 = 1\n"), "no error");
  EXPECT_NE(error_of("[a\xc2\xa1]\n"), "no error");
  EXPECT_NE(error_of("x = { a\xc2\xa1 = 1 }\n"), "no error");
  EXPECT_EQ(error_of("x = \"\"\"a\\\xc2\xa1\"\"\"\n"),
            "t.toml:1:10: an escape sequence cannot start with a non-ASCII character");
  // Where TOML allows them: strings of all four kinds, quoted keys, comments.
  EXPECT_EQ(error_of("x = \"\xc3\xa9\\u00e9\" # \xc3\xbc\n\"\xc3\xa9\" = '\xc3\xa9'\n[\"\xc3\xa9\"]\n"
                     "y = '''\xc3\xa9'''\nz = \"\"\"\xc3\xa9\"\"\"\n"),
            "no error");
  // toml++ reads a token it cannot type up to a value terminator
  // (whitespace, ',', ']', '}', '#'), quotes and opening brackets and all: a
  // quote inside it starts no string, a '{' or '[' inside it opens nothing.
  EXPECT_EQ(error_of("a=0{a={\"'''`-\x13''\xef\xbb\xbb'\n"),  // found by the mustache harness
            "t.toml:1:17: a non-ASCII character outside a string or comment (TOML allows them only there)");
  EXPECT_EQ(error_of("a=1[\"\xc2\xa1\"]\n"),
            "t.toml:1:6: a non-ASCII character outside a string or comment (TOML allows them only there)");
  EXPECT_EQ(error_of("v = 09m\"_\xd2\x8c\"\n"),
            "t.toml:1:10: a non-ASCII character outside a string or comment (TOML allows them only there)");
  EXPECT_NE(error_of("a\"\xc3\xa9\" = 1\n"), "no error");
  EXPECT_EQ(error_of("a = [\"x\", \"y\"]\nb = {c = \"\xc3\xa9\", \"d\" = '\xc3\xa9'}\n"), "no error");
  EXPECT_EQ(error_of("a = [}\n"), "t.toml:1:6: '}' cannot close '['");
  EXPECT_EQ(error_of("a = [1, {b = 2]}\n"), "t.toml:1:15: ']' cannot close '{'");
  EXPECT_EQ(error_of("a = [[1], {b = [2]}]\n"), "no error");
}

// Windows editors save UTF-8 with a byte-order mark; TOML and toml++ accept
// one at the very start of a file, and line 1's columns count after it.
TEST(TomlLimits, AByteOrderMarkIsAcceptedAtTheStartOnly) {
  const std::string bom = "\xEF\xBB\xBF";
  const toml::table parsed = parse_toml_text(bom + "[job]\nname = \"x\"\n", "t.toml");
  EXPECT_EQ(parsed["job"]["name"].value<std::string>(), "x");
  try {
    (void)parse_toml_text(bom + "x = \n", "t.toml");
    ADD_FAILURE() << "parsed a key without a value";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("t.toml:1:", 0), 0U) << e.what();
  }
  EXPECT_THROW((void)parse_toml_text("x = 1\n" + bom + "y = 2\n", "t.toml"), ConfigError);
  EXPECT_THROW((void)parse_toml_text(bom + bom + "y = 2\n", "t.toml"), ConfigError);
  const auto file = std::filesystem::temp_directory_path() / ("bom-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(file, std::ios::binary) << bom << "a = 1\n";
  EXPECT_EQ(parse_toml_file(file)["a"].value<int>(), 1);
  std::ofstream(file, std::ios::binary) << bom << bom << "a = 1\n";
  EXPECT_THROW((void)parse_toml_file(file), ConfigError);
  std::filesystem::remove(file);
}

TEST(TomlLimits, TheQuickstartPasses) {
  EXPECT_NO_THROW((void)parse_toml_file(HPCTRAIN_SOURCE_DIR "/jobs/quickstart.toml"));
  EXPECT_NO_THROW((void)parse_toml_file(HPCTRAIN_SOURCE_DIR "/jobs/quickstart-2node.toml"));
}

}  // namespace
}  // namespace hpctrain::config
