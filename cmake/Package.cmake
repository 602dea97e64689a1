# `cpack -G DEB --config BUILD/CPackConfig.cmake` builds
# hpctrain_<version>_amd64.deb from this build tree: the files `cmake --install`
# puts in a prefix (cmake/Install.cmake), under /usr. Its Depends come from
# dpkg-shlibdeps, which maps every library the binaries and the plugin link to
# the Debian package that ships it; the NCCL backend links no CUDA library
# (src/handles/cuda_nccl_api.h), so they are all Debian's.
#
# Debian wants more, which lintian checks: stripped binaries, no RUNPATH (the
# install keeps only link directories outside the system's, and a build from
# Debian's packages has none), and /usr/share/doc/hpctrain/{copyright,
# changelog.gz} (cmake/debian/). tests/install/deb-package.sh checks all of it.
set(HPCTRAIN_PACKAGE_MAINTAINER "hpctrain maintainers <hpctrain-maintainers@users.noreply.github.com>"
    CACHE STRING "The Maintainer field of the Debian package")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hpctrain)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${HPCTRAIN_PACKAGE_MAINTAINER})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "data-parallel language-model training for SLURM clusters")
# The long description; CPack puts the summary above it.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "hpctrain trains GPT, BERT-style and MLP language models with a deterministic,
seeded data-parallel trainer over MPI: a synchronous reducer (DDP) or an
asynchronous one (DDAP, periodic model merges), and HDF5 checkpoints it
resumes from bit-exactly. jobgen renders SLURM batch scripts from one TOML
experiment and a cluster profile.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# OpenBLAS's OpenMP build, without which Debian's LibTorch runs its matrix
# products about 30x slower; the launchers: mpiexec for runs on one node,
# srun and sbatch on a cluster.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libopenblas0-openmp, mpich, slurm-client")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "lmod")
set(CPACK_STRIP_FILES ON)
# Debian policy: gzip -9n, so the package is reproducible.
set(changelog_gz ${CMAKE_BINARY_DIR}/debian/changelog.gz)
add_custom_command(OUTPUT ${changelog_gz}
                   COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/debian
                   COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/cmake/debian/changelog > ${changelog_gz}
                   DEPENDS ${PROJECT_SOURCE_DIR}/cmake/debian/changelog VERBATIM)
add_custom_target(hpctrain_debian_changelog ALL DEPENDS ${changelog_gz})
install(FILES ${changelog_gz} cmake/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

include(CPack)
