# Third-party packages, all from Debian 12 (env/setup.sh installs them).
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(fmt REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
find_package(tomlplusplus REQUIRED)
if(HPCTRAIN_FUZZ)
  # The fuzzers test toml++ as well: header-only, so that its parser is built
  # into our libraries with the sanitizers (Debian's shared library is not
  # instrumented, and hid its __builtin_unreachable from UBSan).
  set_property(TARGET tomlplusplus::tomlplusplus PROPERTY INTERFACE_COMPILE_OPTIONS -DTOML_HEADER_ONLY=1)
endif()
find_package(nlohmann_json REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(HDF5 REQUIRED COMPONENTS C)
find_library(SENTENCEPIECE_LIBRARY sentencepiece REQUIRED)
find_library(SENTENCEPIECE_TRAIN_LIBRARY sentencepiece_train REQUIRED)
find_path(SENTENCEPIECE_INCLUDE_DIR sentencepiece_processor.h REQUIRED)

set(HPCTRAIN_TORCH_CUDA OFF)
if(HPCTRAIN_WITH_TORCH)
  # Debian's LibTorch 1.13 (CPU); a LibTorch 2.x CUDA distribution works via CMAKE_PREFIX_PATH.
  find_package(Torch REQUIRED)
  message(STATUS "hpctrain: LibTorch ${Torch_VERSION} from ${TORCH_INSTALL_PREFIX}")
  # Whether this LibTorch brought its CUDA library (Debian's does not), decided
  # once for every place that asks: the checks below, reduce/, runtime/ and the tests.
  if(TARGET c10_cuda OR C10_CUDA_LIBRARY)
    set(HPCTRAIN_TORCH_CUDA ON)
  endif()
  # LibTorch's at::parallel_for is a header template that runs in parallel only
  # where the including code is compiled with OpenMP (_OPENMP; ATen/Config.h says
  # AT_PARALLEL_OPENMP), and otherwise calls its body once, on one thread.
  # Debian's Torch config does not add the flag, so every target that links
  # LibTorch (the shared precompiled header included) gets it here.
  find_package(OpenMP REQUIRED COMPONENTS CXX)
  set_property(TARGET torch APPEND PROPERTY INTERFACE_LINK_LIBRARIES OpenMP::OpenMP_CXX)
  # A pip LibTorch carries its own fmt's headers (fmt 12 in PyTorch 2.11) in its
  # include directory, which every target that uses LibTorch searches. Compiled
  # against those but linked with the fmt found above (libfmt.so.9), the link
  # fails on fmt::v12 symbols. So fmt's own directory goes first for every
  # target; where it is a system directory (searched last whatever is done),
  # configure stops with what to do. src/runtime/libtorch_build.cpp checks at
  # compile time that the fmt headers it sees beside LibTorch's are the fmt linked.
  # (Debian's LibTorch names /usr/include, where Debian's fmt is: no clash.)
  get_target_property(fmt_include fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  foreach(torch_include ${TORCH_INCLUDE_DIRS})
    if(EXISTS ${torch_include}/fmt/core.h
       AND NOT torch_include IN_LIST fmt_include
       AND NOT torch_include IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
      if(fmt_include IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
        message(FATAL_ERROR "hpctrain: LibTorch's ${torch_include}/fmt would shadow fmt ${fmt_VERSION} in "
                            "${fmt_include}, a system directory: point CMAKE_PREFIX_PATH at an fmt installed "
                            "elsewhere (bench/gpu-kit.sh's kit has one)")
      endif()
      include_directories(BEFORE SYSTEM ${fmt_include})
      message(STATUS "hpctrain: LibTorch carries fmt headers (${torch_include}/fmt); fmt ${fmt_VERSION}'s "
                     "(${fmt_include}) are searched first")
      break()
    endif()
  endforeach()
endif()

# NCCL backend: on whenever the CUDA and NCCL headers and libraries are found.
# The libraries are not linked: hpctrain opens them at run time, when a model
# goes on a GPU (src/handles/cuda_nccl_api.h), so the same binary runs on nodes
# without CUDA and its package depends on nothing outside Debian. The
# directories found here are its last place to look. No device code is
# compiled, so nvcc is not needed.
set(HPCTRAIN_HAVE_NCCL OFF)
if(HPCTRAIN_WITH_NCCL)
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  # CMake 3.25.1's FindCUDAToolkit (Debian 12's) stops configuring when the
  # toolkit has no nvToolsExt library (CUDA 13 has none) and the project
  # requires CMake 3.25: it then sets a property on a target it never made
  # (fixed in 3.25.2). That code reads only CMAKE_MINIMUM_REQUIRED_VERSION,
  # so the module sees 3.24 there; policies are not affected.
  set(hpctrain_required ${CMAKE_MINIMUM_REQUIRED_VERSION})
  if(CMAKE_VERSION VERSION_LESS 3.25.2)
    set(CMAKE_MINIMUM_REQUIRED_VERSION 3.24)
  endif()
  find_package(CUDAToolkit QUIET)
  set(CMAKE_MINIMUM_REQUIRED_VERSION ${hpctrain_required})
  if(CUDAToolkit_FOUND)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} $ENV{NCCL_HOME}/include)
    # libnccl.so.2 by its full name too: NCCL's pip wheel (nvidia-nccl-cu*) has
    # no unversioned libnccl.so. hpctrain opens the library by that soname anyway.
    find_library(NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${CUDAToolkit_LIBRARY_DIR} $ENV{NCCL_HOME}/lib)
    if(NCCL_INCLUDE_DIR)
      # NCCL >= 2.14.3 for non-blocking communicators (start-up under a timeout).
      file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
      string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3"
                           HPCTRAIN_NCCL_VERSION "${nccl_version_lines}")
      if(HPCTRAIN_NCCL_VERSION VERSION_LESS 2.14.3)
        message(WARNING "hpctrain: ${NCCL_INCLUDE_DIR}/nccl.h is NCCL ${HPCTRAIN_NCCL_VERSION}; the NCCL backend needs "
                        "2.14.3 or newer (non-blocking communicators) and is left out")
        set(NCCL_LIBRARY NCCL_LIBRARY-NOTFOUND)
      endif()
    endif()
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      message(STATUS "hpctrain: NCCL ${HPCTRAIN_NCCL_VERSION} (${NCCL_LIBRARY}), CUDA ${CUDAToolkit_VERSION} "
                     "(${CUDAToolkit_LIBRARY_DIR})")
      add_library(hpctrain_nccl INTERFACE)
      target_include_directories(hpctrain_nccl SYSTEM INTERFACE ${NCCL_INCLUDE_DIR})
      target_include_directories(hpctrain_nccl SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
      get_filename_component(nccl_library_dir ${NCCL_LIBRARY} DIRECTORY)
      set(HPCTRAIN_CUDA_LIBRARY_DIRS ${CUDAToolkit_LIBRARY_DIR} ${nccl_library_dir})
      list(REMOVE_DUPLICATES HPCTRAIN_CUDA_LIBRARY_DIRS)
      set(HPCTRAIN_HAVE_NCCL ON)
    endif()
  endif()
endif()
message(STATUS "hpctrain: NCCL backend ${HPCTRAIN_HAVE_NCCL}")
include(${CMAKE_CURRENT_LIST_DIR}/TorchCudaChecks.cmake)

# Every LibTorch-using library links through this, which also shares one
# precompiled header of the LibTorch headers most of our files need (tensors,
# autograd, torch::nn::Module), parsed once per build. Not <torch/torch.h>:
# that precompiled header is 650-780 MB, and loading it cost every
# translation unit 5-6 s of CPU before its first line (GCC 12, an empty file),
# against 3.7 s for this one. Files include what they use; the few that use nn
# modules, the optimizers or custom autograd functions parse those headers
# themselves (1-2.5 s more). With this and -g1, hpctrain and jobgen build in
# 5.8 minutes on 2 cores from nothing, against 10.6 before.
if(HPCTRAIN_WITH_TORCH)
  add_library(hpctrain_torch_pch STATIC ${PROJECT_SOURCE_DIR}/cmake/torch_pch.cpp)
  target_link_libraries(hpctrain_torch_pch PUBLIC torch PRIVATE hpctrain_warnings)
  target_precompile_headers(hpctrain_torch_pch PRIVATE <torch/types.h> <torch/utils.h> <torch/nn/module.h>)
  function(hpctrain_use_torch target)
    target_link_libraries(${target} PRIVATE torch)
    target_precompile_headers(${target} REUSE_FROM hpctrain_torch_pch)
  endfunction()
endif()

