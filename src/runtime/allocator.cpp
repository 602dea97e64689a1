#include "runtime/allocator.h"

#include <malloc.h>

#include <array>

namespace hpctrain::runtime {

std::string keep_freed_memory(const cluster::Environment& env) {
  for (const char* name : std::array{"MALLOC_MMAP_MAX_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                                     "MALLOC_TOP_PAD_", "MALLOC_ARENA_MAX"}) {
    if (env.has(name)) return std::string("left to ") + name + " from the environment";
  }
  if (env.get("GLIBC_TUNABLES").value_or("").find("glibc.malloc.") != std::string::npos) {
    return "left to GLIBC_TUNABLES";
  }
  if (const auto preload = env.get("LD_PRELOAD"); preload && preload->find("alloc") != std::string::npos) {
    return "left to LD_PRELOAD=" + *preload;
  }
#if defined(__GLIBC__)
  // Called once at start-up, before training starts any thread of its own.
  if (mallopt(M_MMAP_MAX, 0) == 1 &&         // NOLINT(concurrency-mt-unsafe)
      mallopt(M_TRIM_THRESHOLD, -1) == 1) {  // NOLINT(concurrency-mt-unsafe)
    return "freed memory kept for reuse (glibc: no mmap per block, no trimming)";
  }
  return "glibc refused the heap settings; its defaults stay";
#else
  return "not glibc: the allocator's defaults stay";
#endif
}

}  // namespace hpctrain::runtime
