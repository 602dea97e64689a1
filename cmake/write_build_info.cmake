# cmake -DSOURCE_DIR=... -DVERSION=... -DOUT=... -P write_build_info.cmake
# Runs at every build (not at configure time): writes OUT, the C++ source of
# support::build_info(), with the version, the git commit of SOURCE_DIR and
# whether its tracked files differ from that commit. OUT is rewritten only when
# its text changes, so a build with nothing new recompiles nothing.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD RESULT_VARIABLE failed
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
set(dirty false)
if(failed OR NOT commit MATCHES "^[0-9a-f]+$")
  set(commit unknown)  # a source tarball, or a repository git will not read
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  if(NOT changes STREQUAL "")
    set(dirty true)
  endif()
endif()
file(WRITE "${OUT}.new"
"// Generated at build time by cmake/write_build_info.cmake; do not edit.
#include \"support/build_info.h\"

namespace hpctrain::support {

const BuildInfo& build_info() {
  static const BuildInfo info{\"${VERSION}\", \"${commit}\", ${dirty}};
  return info;
}

}  // namespace hpctrain::support
")
file(COPY_FILE "${OUT}.new" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.new")
