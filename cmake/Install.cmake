# `cmake --install BUILD --prefix P`: the two programs, the SentencePiece
# plugin where hpctrain looks for it (P/lib/hpctrain/, see
# src/data/sentencepiece_engine.h), and the shared data jobgen searches
# (P/share/hpctrain/{templates,clusters}, see src/jobgen/search_path.h), the
# example experiments, the documentation and an Lmod modulefile.
#
# RUNPATH: hpctrain's own code is static except the plugin, which it opens by
# path, so an installed binary needs no $ORIGIN entry. Libraries linked from
# outside the system's search path (a LibTorch or CUDA tarball) stay found:
# CMAKE_INSTALL_RPATH_USE_LINK_PATH keeps their directories. The Debian
# package should be built without it, from system libraries only.
include(GNUInstallDirs)
if(NOT DEFINED CMAKE_INSTALL_RPATH_USE_LINK_PATH)
  set(CMAKE_INSTALL_RPATH_USE_LINK_PATH ON)
endif()

set(HPCTRAIN_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/hpctrain)
install(TARGETS jobgen RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(HPCTRAIN_WITH_TORCH)
  install(TARGETS hpctrain RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(TARGETS hpctrain_sentencepiece LIBRARY DESTINATION lib/hpctrain)
endif()
install(DIRECTORY templates/ DESTINATION ${HPCTRAIN_SHARE_DIR}/templates FILES_MATCHING PATTERN "*.mustache")
install(DIRECTORY env/clusters/ DESTINATION ${HPCTRAIN_SHARE_DIR}/clusters FILES_MATCHING PATTERN "*.toml")
install(DIRECTORY jobs/ DESTINATION ${HPCTRAIN_SHARE_DIR}/jobs FILES_MATCHING PATTERN "*.toml")
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# The modulefile finds its prefix from its own path, so the tree can be moved.
configure_file(cmake/modulefile.lua.in ${CMAKE_BINARY_DIR}/modulefile/${PROJECT_VERSION}.lua @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/modulefile/${PROJECT_VERSION}.lua
        DESTINATION ${CMAKE_INSTALL_DATADIR}/modulefiles/hpctrain)
