// The heap policy for training. Every step allocates and frees the same large
// activations (the logits alone are B*T*V floats). glibc serves blocks above
// its mmap threshold with fresh mappings and unmaps them on free, so every
// step faults tens of MB of zeroed pages back in: about 15% of a quickstart
// step on 2 cores. Keeping freed memory in the heap for reuse removes that;
// the price is that the heap stays at its high-water mark, which a training
// loop reaches in its first step anyway.
#pragma once

#include <string>

#include "cluster/environment.h"

namespace hpctrain::runtime {

// Tells glibc to serve every block from the heap and never to trim it, unless
// the environment already chooses a policy (MALLOC_*_ variables, glibc.malloc
// tunables, or a preloaded allocator such as jemalloc or tcmalloc). Returns
// what was done, for the log.
std::string keep_freed_memory(const cluster::Environment& env);

}  // namespace hpctrain::runtime
