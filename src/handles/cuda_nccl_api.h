// The CUDA runtime and NCCL, opened at run time (dlopen) rather than linked.
// hpctrain then starts on nodes that have no CUDA at all (every CPU run, and
// the Debian package, whose dependencies come from Debian, which ships
// neither), and only a run that puts its model on a GPU needs the libraries.
// nccl.h and cuda_runtime_api.h still provide the types at build time, and
// their versions fix which sonames are opened: libnccl.so.<NCCL_MAJOR> and
// libcudart.so.<CUDA major>.
//
// Where each library is looked for, the first that opens:
//   1. $HPCTRAIN_NCCL_LIBRARY / $HPCTRAIN_CUDART_LIBRARY, a path;
//   2. the soname through the dynamic loader (LD_LIBRARY_PATH, ld.so.cache,
//      hpctrain's RUNPATH): what `module load cuda nccl` sets up;
//   3. the directories the build found them in (HPCTRAIN_CUDA_LIBRARY_DIRS).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <memory>
#include <stdexcept>
#include <string>

namespace hpctrain::handles {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The functions hpctrain calls, resolved from the opened libraries. The
// libraries stay open while any copy of the shared_ptr that load_cuda_nccl()
// returns is alive.
struct CudaNcclApi {
  // CUDA runtime.
  decltype(&::cudaGetErrorString) get_error_string = nullptr;
  decltype(&::cudaRuntimeGetVersion) runtime_get_version = nullptr;
  decltype(&::cudaGetDeviceCount) get_device_count = nullptr;
  decltype(&::cudaSetDevice) set_device = nullptr;
  decltype(&::cudaStreamCreateWithFlags) stream_create_with_flags = nullptr;
  decltype(&::cudaStreamDestroy) stream_destroy = nullptr;
  decltype(&::cudaStreamSynchronize) stream_synchronize = nullptr;
  decltype(&::cudaStreamWaitEvent) stream_wait_event = nullptr;
  decltype(&::cudaEventCreateWithFlags) event_create_with_flags = nullptr;
  decltype(&::cudaEventDestroy) event_destroy = nullptr;
  decltype(&::cudaEventRecord) event_record = nullptr;
  decltype(&::cudaEventQuery) event_query = nullptr;
  // Spelled out: cuda_runtime.h, when a LibTorch CUDA header includes it, adds
  // template overloads of cudaMalloc that would make decltype ambiguous.
  cudaError_t (*device_malloc)(void**, size_t) = nullptr;
  decltype(&::cudaFree) device_free = nullptr;
  cudaError_t (*memcpy)(void*, const void*, size_t, cudaMemcpyKind) = nullptr;
  // NCCL.
  decltype(&::ncclGetVersion) nccl_get_version = nullptr;
  decltype(&::ncclGetErrorString) nccl_get_error_string = nullptr;
  decltype(&::ncclGetUniqueId) nccl_get_unique_id = nullptr;
  decltype(&::ncclCommInitRankConfig) nccl_comm_init_rank_config = nullptr;
  decltype(&::ncclCommFinalize) nccl_comm_finalize = nullptr;
  decltype(&::ncclCommDestroy) nccl_comm_destroy = nullptr;
  decltype(&::ncclCommAbort) nccl_comm_abort = nullptr;
  decltype(&::ncclCommGetAsyncError) nccl_comm_get_async_error = nullptr;
  decltype(&::ncclAllReduce) nccl_all_reduce = nullptr;
  decltype(&::ncclBroadcast) nccl_broadcast = nullptr;
  decltype(&::ncclAllGather) nccl_all_gather = nullptr;
  decltype(&::ncclReduceScatter) nccl_reduce_scatter = nullptr;
  decltype(&::ncclSend) nccl_send = nullptr;  // alltoall: a group of sends and receives
  decltype(&::ncclRecv) nccl_recv = nullptr;
  decltype(&::ncclGroupStart) nccl_group_start = nullptr;
  decltype(&::ncclGroupEnd) nccl_group_end = nullptr;

  std::string cudart_path;  // the files the loader opened
  std::string nccl_path;
  int nccl_version = 0;  // ncclGetVersion's code, e.g. 22809 for 2.28.9
};

// Opens both libraries and resolves every function above. Throws CudaError
// naming each place tried and why it failed, a missing function, or an NCCL
// whose major version differs from the headers' or that predates 2.14.3
// (non-blocking communicators, which start-up needs to keep its timeout).
std::shared_ptr<const CudaNcclApi> load_cuda_nccl();

// "NCCL 2.28.9 (/usr/local/cuda/lib64/libnccl.so.2), CUDA runtime 13.0 (...)".
std::string describe(const CudaNcclApi& api);

// The sonames load_cuda_nccl() opens, fixed by the headers' versions:
// "libcudart.so.13", "libnccl.so.2".
std::string cudart_soname();
std::string nccl_soname();

// What this hpctrain was built against: "NCCL 2.28.9, CUDA 13.0 headers".
std::string built_against();

}  // namespace hpctrain::handles
