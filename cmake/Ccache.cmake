# ccache for every compile. The sloppiness settings let ccache serve
# translation units that use the LibTorch precompiled header.
#
# A build in another checkout of the same sources (CI clones into a fresh
# directory every time) must hit the cache too, or CI rebuilds everything from
# scratch. Two things keep absolute paths out of ccache's hash: CCACHE_BASEDIR
# makes ccache rewrite paths under the source tree to relative ones before
# hashing and compiling, and -fdebug-prefix-map writes the source tree as "."
# into the debug information, so an object served from another checkout's
# compile is byte-for-byte what this checkout would have produced (ccache then
# leaves the working directory out of the hash). Debuggers find the sources
# with `directory <source tree>` (gdb) when run from elsewhere.
#
# One catch, from ccache's log: when the LibTorch precompiled header is
# rebuilt in a tree that already holds an older cmake_pch.hxx.gch, ccache
# hashes that old file into the key ("Detected use of precompiled header"), so
# the entry a fresh checkout looks up (no .gch yet) is only stored by a build
# in a fresh checkout. And every translation unit that uses the header hashes
# the .gch's bytes, which hold the checkout's path. To warm the cache for CI,
# build the final commit once in a fresh clone (any path): CI's clone then gets
# that clone's .gch from the cache and every object compiled against it.
#
# Depend mode (CCACHE_DEPEND): on a miss, ccache's default first runs the
# preprocessor to hash the preprocessed text, about 1 s per LibTorch
# translation unit and over a minute of a first build on 2 cores, when the
# cache is empty and every lookup misses. In depend mode ccache hashes the
# source and the headers named by the compiler's own -MD list instead, so a
# miss costs nothing extra; the price is a miss after an edit that leaves the
# preprocessed text unchanged (a comment in a header).
find_program(HPCTRAIN_CCACHE ccache)
if(HPCTRAIN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      CCACHE_BASEDIR=${PROJECT_SOURCE_DIR}
      CCACHE_DEPEND=1
      ${HPCTRAIN_CCACHE})
  add_compile_options(-fdebug-prefix-map=${PROJECT_SOURCE_DIR}=.)
  message(STATUS "hpctrain: compiling through ccache (${HPCTRAIN_CCACHE}), paths relative to ${PROJECT_SOURCE_DIR}")
endif()
