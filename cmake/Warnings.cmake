# Warnings are on and visible for our own targets only; third-party headers
# (LibTorch, MPI) are included as SYSTEM so their warnings do not drown ours.
add_library(hpctrain_warnings INTERFACE)
target_compile_options(hpctrain_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough -Werror=switch
  $<$<BOOL:${HPCTRAIN_WERROR}>:-Werror>)
