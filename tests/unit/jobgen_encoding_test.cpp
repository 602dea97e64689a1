// jobgen's context encoders and SLURM time parsing.
#include <gtest/gtest.h>

#include "config/config_error.h"
#include "jobgen/encoding.h"
#include "jobgen/slurm_request.h"

namespace hpctrain::jobgen {
namespace {

TEST(JobgenEncodingTest, SbatchValuesAreDoubleQuotedWithBackslashAndQuoteEscaped) {
  EXPECT_EQ(sbatch_value("plain", "f"), "\"plain\"");
  EXPECT_EQ(sbatch_value(R"(a"b\c # d $E)", "f"), R"("a\"b\\c # d $E")");
}

TEST(JobgenEncodingTest, ShellWordsAreSingleQuoted) {
  EXPECT_EQ(shell_word("it's $(x) `y`", "f"), R"('it'\''s $(x) `y`')");
  EXPECT_EQ(shell_word("", "f"), "''");
}

TEST(JobgenEncodingTest, RuntimeValuesExpandVariablesButNeverCommands) {
  EXPECT_EQ(shell_expanding("${TMPDIR}/a \"b\"", "f"), R"("${TMPDIR}/a \"b\"")");
  EXPECT_THROW((void)shell_expanding("$(id)", "f"), EncodingError);
  EXPECT_THROW((void)shell_expanding("`id`", "f"), EncodingError);
  EXPECT_THROW((void)shell_expanding("$((1+1))", "f"), EncodingError);
}

TEST(JobgenEncodingTest, RunTimeValuesAreLiteralTextAndPlainExpansionsOnly) {
  EXPECT_EQ(shell_expanding("$HOME/x-${SLURM_JOB_ID}_$A1", "f"), R"("${HOME}/x-${SLURM_JOB_ID}_${A1}")");
  EXPECT_EQ(shell_expanding("50% off \\ me", "f"), R"("50% off \\ me")");
  // Each of these runs code in bash, or could: parameter operators, special
  // parameters, indirection, arithmetic subscripts, an unclosed brace.
  for (const char* value : {"${X@P}", "${V:=$(id)}", "${a[$X]}", "${X/a/b}", "${#X}", "${!X}", "$$", "$1", "$?", "${X",
                            "$", "a$", "${}", "${1}", "$[1+1]"}) {
    EXPECT_THROW((void)shell_expanding(value, "f"), EncodingError) << value;
  }
}

TEST(JobgenEncodingTest, ControlCharactersAreRefusedNamingTheField) {
  for (const char* bad : {"a\nb", "a\rb", "a\tb", "\x1b[0m", "a\x7f"}) {
    try {
      (void)sbatch_value(bad, "slurm.job_name");
      ADD_FAILURE() << "accepted " << printable(bad);
    } catch (const EncodingError& e) {
      EXPECT_NE(std::string(e.what()).find("slurm.job_name: control character"), std::string::npos) << e.what();
    }
    EXPECT_THROW((void)shell_word(bad, "f"), EncodingError);
  }
  EXPECT_EQ(printable("a\nb"), "a\\x0ab");
}

TEST(JobgenEncodingTest, SlurmTimeFormats) {
  EXPECT_EQ(parse_slurm_time("30", "t"), 30 * 60);
  EXPECT_EQ(parse_slurm_time("30:15", "t"), 30 * 60 + 15);
  EXPECT_EQ(parse_slurm_time("2:00:05", "t"), 2 * 3600 + 5);
  EXPECT_EQ(parse_slurm_time("2-3", "t"), 2 * 86400 + 3 * 3600);
  EXPECT_EQ(parse_slurm_time("2-3:04", "t"), 2 * 86400 + 3 * 3600 + 4 * 60);
  EXPECT_EQ(parse_slurm_time("2-3:04:05", "t"), 2 * 86400 + 3 * 3600 + 4 * 60 + 5);
  for (const char* bad : {"", "1:2:3:4", "abc", "1h", "-1", "1-", "1:-2"}) {
    EXPECT_THROW((void)parse_slurm_time(bad, "t"), config::ConfigError) << bad;
  }
}

}  // namespace
}  // namespace hpctrain::jobgen
