// The heap policy is hpctrain's default, but an allocator choice already made
// in the environment (glibc variables or tunables, a preloaded allocator) wins.
#include "runtime/allocator.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace hpctrain::runtime {
namespace {

cluster::Environment with(const std::string& name, const std::string& value) {
  return cluster::Environment(std::map<std::string, std::string>{{name, value}});
}

TEST(AllocatorTest, LeavesAnEnvironmentsChoiceAlone) {
  EXPECT_EQ(keep_freed_memory(with("MALLOC_ARENA_MAX", "2")), "left to MALLOC_ARENA_MAX from the environment");
  EXPECT_EQ(keep_freed_memory(with("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=1")), "left to GLIBC_TUNABLES");
  EXPECT_EQ(keep_freed_memory(with("LD_PRELOAD", "/usr/lib/libjemalloc.so.2")),
            "left to LD_PRELOAD=/usr/lib/libjemalloc.so.2");
}

TEST(AllocatorTest, OtherwiseKeepsFreedMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer replaces glibc's malloc, which then refuses mallopt";
#endif
  EXPECT_EQ(keep_freed_memory(with("GLIBC_TUNABLES", "glibc.pthread.rseq=0")),
            "freed memory kept for reuse (glibc: no mmap per block, no trimming)");
}

}  // namespace
}  // namespace hpctrain::runtime
