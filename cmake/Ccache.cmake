# ccache for every compile. The sloppiness settings let ccache serve
# translation units that use the LibTorch precompiled header.
find_program(HPCTRAIN_CCACHE ccache)
if(HPCTRAIN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      ${CMAKE_COMMAND} -E env CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${HPCTRAIN_CCACHE})
  message(STATUS "hpctrain: compiling through ccache (${HPCTRAIN_CCACHE})")
endif()
