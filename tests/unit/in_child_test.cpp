// support::run_in_child: what the child returns comes back; a crash or an
// exception in the child is reported, and the calling process carries on.
#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>
#include <string>

#include "support/in_child.h"

namespace hpctrain::support {
namespace {

TEST(InChild, ReturnsWhatTheChildReturns) {
  const ChildResult r = run_in_child([] { return std::string(100000, 'x') + "end"; });
  ASSERT_TRUE(r.output.has_value());
  EXPECT_EQ(r.output->size(), 100003U);
  EXPECT_EQ(r.output->substr(100000), "end");
  EXPECT_EQ(r.signal, 0);
}

TEST(InChild, ReportsTheSignalThatKilledTheChild) {
  const ChildResult r = run_in_child([]() -> std::string {
    (void)std::raise(SIGFPE);
    return "survived";
  });
  EXPECT_FALSE(r.output.has_value());
  EXPECT_EQ(r.signal, SIGFPE);
  EXPECT_EQ(r.death, "killed by SIGFPE (Floating point exception)");
}

TEST(InChild, ReportsAnExceptionByItsMessage) {
  const ChildResult r = run_in_child([]() -> std::string { throw std::runtime_error("no such dataset"); });
  EXPECT_FALSE(r.output.has_value());
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.death, "no such dataset");
}

}  // namespace
}  // namespace hpctrain::support
