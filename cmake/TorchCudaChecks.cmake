# A CUDA LibTorch beside the NCCL backend: two checks, each saying what it
# found. Read from the dynamic section of libtorch_cuda.so (objdump -p), so
# they cost nothing at run time. Only a CUDA LibTorch is checked; Debian's is CPU-only.
#  1. LibTorch's CUDA runtime major must be the toolkit's: hpctrain opens
#     libcudart.so.<toolkit major>, and a LibTorch built for another major
#     brings a second CUDA runtime into the process.
#  2. One libnccl.so.2 in the process. A pip LibTorch loads its own (NEEDED):
#     hpctrain's dlopen of the same soname then returns that one, whatever
#     NCCL_LIBRARY names, and hpctrain --version / doctor --nccl print which.
#     The libtorch zip links NCCL statically instead: its copy is private to
#     LibTorch (hpctrain never calls it) and hpctrain loads NCCL_LIBRARY.
if(NOT (HPCTRAIN_HAVE_NCCL AND HPCTRAIN_WITH_TORCH))
  return()
endif()
if(NOT HPCTRAIN_TORCH_CUDA)
  message(STATUS "hpctrain: LibTorch is CPU-only, so models train on CPUs; NCCL serves `hpctrain doctor --nccl`. "
                 "For GPUs build against a CUDA LibTorch (docs/bootstrap.md, Building for GPUs)")
  return()
endif()
# Beside libtorch.so: under the prefix's lib/ in the libtorch zip and the pip
# wheel, in the multiarch directory (/usr/lib/x86_64-linux-gnu) in Debian's.
get_filename_component(hpctrain_torch_library_dir "${TORCH_LIBRARY}" DIRECTORY)
find_library(HPCTRAIN_TORCH_CUDA_LIBRARY torch_cuda PATHS ${hpctrain_torch_library_dir} ${TORCH_INSTALL_PREFIX}/lib
             NO_DEFAULT_PATH)
find_program(HPCTRAIN_OBJDUMP objdump)
if(NOT HPCTRAIN_TORCH_CUDA_LIBRARY OR NOT HPCTRAIN_OBJDUMP)
  message(WARNING "hpctrain: a CUDA LibTorch, but libtorch_cuda.so (${HPCTRAIN_TORCH_CUDA_LIBRARY}) or objdump "
                  "(${HPCTRAIN_OBJDUMP}) is missing: its CUDA and NCCL versions are not checked")
  return()
endif()
execute_process(COMMAND ${HPCTRAIN_OBJDUMP} -p ${HPCTRAIN_TORCH_CUDA_LIBRARY} OUTPUT_VARIABLE torch_dynamic ERROR_QUIET)

if(torch_dynamic MATCHES "NEEDED +(libcudart[-0-9a-f]*\\.so\\.([0-9]+))")
  set(torch_cudart ${CMAKE_MATCH_1})
  set(torch_cuda_major ${CMAKE_MATCH_2})
  if(torch_cuda_major VERSION_EQUAL CUDAToolkit_VERSION_MAJOR)
    message(STATUS "hpctrain: LibTorch needs ${torch_cudart}, CUDA ${torch_cuda_major} as the toolkit "
                   "(${CUDAToolkit_VERSION}): one CUDA runtime")
  else()
    message(WARNING "hpctrain: LibTorch (${HPCTRAIN_TORCH_CUDA_LIBRARY}) was built for CUDA ${torch_cuda_major} "
                    "(${torch_cudart}), the toolkit found is CUDA ${CUDAToolkit_VERSION} (${CUDAToolkit_LIBRARY_DIR}): "
                    "the process would load two CUDA runtimes. Point CUDAToolkit_ROOT at a CUDA ${torch_cuda_major} "
                    "toolkit (with its NCCL)")
  endif()
else()
  message(STATUS "hpctrain: LibTorch links its CUDA runtime statically; hpctrain opens libcudart.so."
                 "${CUDAToolkit_VERSION_MAJOR} (CUDA ${CUDAToolkit_VERSION})")
endif()

if(torch_dynamic MATCHES "NEEDED +(libnccl[-0-9a-f]*\\.so[.0-9]*)")
  message(STATUS "hpctrain: LibTorch loads ${CMAKE_MATCH_1} itself, so hpctrain's NCCL is that one (loaded first), "
                 "not necessarily ${NCCL_LIBRARY}: one NCCL in the process; `hpctrain doctor --nccl` prints its path "
                 "and version (NCCL 2, at least 2.14.3)")
else()
  message(STATUS "hpctrain: LibTorch carries NCCL statically (private to it); hpctrain loads ${NCCL_LIBRARY} "
                 "(NCCL ${HPCTRAIN_NCCL_VERSION})")
endif()
