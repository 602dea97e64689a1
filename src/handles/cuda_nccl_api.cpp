#include "handles/cuda_nccl_api.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#ifndef HPCTRAIN_CUDA_LIBRARY_DIRS
#error "HPCTRAIN_CUDA_LIBRARY_DIRS: the build's CUDA and NCCL directories, colon-separated (src/handles/CMakeLists.txt)"
#endif

// Symbols are looked up by their plain names; the per-thread default stream
// variant of the runtime API (cudaEventRecord_ptsz, ...) is not what hpctrain
// orders its streams by (see comm/nccl_communicator.h).
#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "hpctrain's NCCL backend expects the legacy default stream"
#endif

namespace hpctrain::handles {
namespace {

// 2.14.3: non-blocking communicators (ncclCommInitRankConfig, ncclCommFinalize); ncclAvg came in 2.10.
constexpr int kMinimumNccl = 21403;

// One opened library; closed when the last API copy goes.
struct Library {
  void* handle = nullptr;
  std::string path;
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  ~Library() {
    if (handle != nullptr) dlclose(handle);
  }
};

// The file the dynamic loader actually opened for `handle`.
std::string opened_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, static_cast<void*>(&map)) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

std::vector<std::string> build_directories() {
  std::vector<std::string> dirs;
  const std::string_view all = HPCTRAIN_CUDA_LIBRARY_DIRS;
  std::size_t start = 0;
  while (start <= all.size()) {
    const std::size_t end = std::min(all.find(':', start), all.size());
    if (end > start) dirs.emplace_back(all.substr(start, end - start));
    start = end + 1;
  }
  return dirs;
}

// Opens `soname` from the places listed in cuda_nccl_api.h, or throws naming them all.
void open_library(Library& library, const char* env_var, const std::string& soname) {
  std::vector<std::string> candidates;
  // Read on the thread that builds the communicator, before it starts any other.
  if (const char* path = std::getenv(env_var); path != nullptr && *path != '\0') {  // NOLINT(concurrency-mt-unsafe)
    candidates.emplace_back(path);  // an explicit choice: nothing else is tried
  } else {
    candidates.push_back(soname);
    for (const auto& dir : build_directories()) candidates.push_back((std::filesystem::path(dir) / soname).string());
  }
  std::string tried;
  for (const auto& candidate : candidates) {
    dlerror();  // NOLINT(concurrency-mt-unsafe): clears this thread's last error
    library.handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library.handle != nullptr) {
      library.path = opened_path(library.handle, candidate);
      return;
    }
    const char* why = dlerror();  // NOLINT(concurrency-mt-unsafe): right after dlopen, on this thread
    tried += fmt::format("\n  {}: {}", candidate, why != nullptr ? why : "not found");
  }
  throw CudaError(fmt::format("cannot open {} (set {} to its path, or load the module that provides it); tried:{}",
                              soname, env_var, tried));
}

template <typename Function>
void bind(Function& function, const Library& library, const char* name) {
  function = reinterpret_cast<Function>(dlsym(library.handle, name));
  if (function == nullptr) throw CudaError(fmt::format("{} has no function {}", library.path, name));
}

// NCCL's code is major*10000 + minor*100 + patch since 2.9 (major*1000 + ... before).
int nccl_major(int code) { return code >= 20900 ? code / 10000 : code / 1000; }

std::string nccl_version_string(int code) {
  if (code >= 20900) return fmt::format("{}.{}.{}", nccl_major(code), code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", nccl_major(code), code % 1000 / 100, code % 100);
}

}  // namespace

std::shared_ptr<const CudaNcclApi> load_cuda_nccl() {
  // Both libraries are owned by the one shared_ptr's control block, next to the table.
  struct Owned {
    Library cudart;
    Library nccl;
    CudaNcclApi api;
  };
  auto owned = std::make_shared<Owned>();
  open_library(owned->cudart, "HPCTRAIN_CUDART_LIBRARY", cudart_soname());
  open_library(owned->nccl, "HPCTRAIN_NCCL_LIBRARY", nccl_soname());
  CudaNcclApi& api = owned->api;
  const Library& rt = owned->cudart;
  bind(api.get_error_string, rt, "cudaGetErrorString");
  bind(api.runtime_get_version, rt, "cudaRuntimeGetVersion");
  bind(api.get_device_count, rt, "cudaGetDeviceCount");
  bind(api.set_device, rt, "cudaSetDevice");
  bind(api.stream_create_with_flags, rt, "cudaStreamCreateWithFlags");
  bind(api.stream_destroy, rt, "cudaStreamDestroy");
  bind(api.stream_synchronize, rt, "cudaStreamSynchronize");
  bind(api.stream_wait_event, rt, "cudaStreamWaitEvent");
  bind(api.event_create_with_flags, rt, "cudaEventCreateWithFlags");
  bind(api.event_destroy, rt, "cudaEventDestroy");
  bind(api.event_record, rt, "cudaEventRecord");
  bind(api.event_query, rt, "cudaEventQuery");
  bind(api.device_malloc, rt, "cudaMalloc");
  bind(api.device_free, rt, "cudaFree");
  bind(api.memcpy, rt, "cudaMemcpy");
  const Library& nccl = owned->nccl;
  bind(api.nccl_get_version, nccl, "ncclGetVersion");
  bind(api.nccl_get_error_string, nccl, "ncclGetErrorString");
  bind(api.nccl_get_unique_id, nccl, "ncclGetUniqueId");
  bind(api.nccl_comm_init_rank_config, nccl, "ncclCommInitRankConfig");
  bind(api.nccl_comm_finalize, nccl, "ncclCommFinalize");
  bind(api.nccl_comm_destroy, nccl, "ncclCommDestroy");
  bind(api.nccl_comm_abort, nccl, "ncclCommAbort");
  bind(api.nccl_comm_get_async_error, nccl, "ncclCommGetAsyncError");
  bind(api.nccl_all_reduce, nccl, "ncclAllReduce");
  bind(api.nccl_broadcast, nccl, "ncclBroadcast");
  bind(api.nccl_all_gather, nccl, "ncclAllGather");
  bind(api.nccl_reduce_scatter, nccl, "ncclReduceScatter");
  bind(api.nccl_send, nccl, "ncclSend");
  bind(api.nccl_recv, nccl, "ncclRecv");
  bind(api.nccl_group_start, nccl, "ncclGroupStart");
  bind(api.nccl_group_end, nccl, "ncclGroupEnd");
  api.cudart_path = rt.path;
  api.nccl_path = nccl.path;

  if (api.nccl_get_version(&api.nccl_version) != ncclSuccess) {
    throw CudaError(fmt::format("{}: ncclGetVersion failed", api.nccl_path));
  }
  if (nccl_major(api.nccl_version) != NCCL_MAJOR || api.nccl_version < kMinimumNccl) {
    throw CudaError(fmt::format("{} is NCCL {}; hpctrain was built against NCCL {} and needs {}.x, at least {}",
                                api.nccl_path, nccl_version_string(api.nccl_version),
                                nccl_version_string(NCCL_VERSION_CODE), NCCL_MAJOR, nccl_version_string(kMinimumNccl)));
  }
  // Aliasing constructor: the table's lifetime is the libraries'.
  return {owned, &owned->api};
}

std::string describe(const CudaNcclApi& api) {
  int runtime = 0;
  const std::string runtime_version = api.runtime_get_version(&runtime) == cudaSuccess
                                          ? fmt::format("{}.{}", runtime / 1000, runtime % 1000 / 10)
                                          : std::string("unknown");
  return fmt::format("NCCL {} ({}), CUDA runtime {} ({})", nccl_version_string(api.nccl_version), api.nccl_path,
                     runtime_version, api.cudart_path);
}

std::string cudart_soname() { return fmt::format("libcudart.so.{}", CUDART_VERSION / 1000); }
std::string nccl_soname() { return fmt::format("libnccl.so.{}", NCCL_MAJOR); }

std::string built_against() {
  return fmt::format("NCCL {}, CUDA {}.{} headers", nccl_version_string(NCCL_VERSION_CODE), CUDART_VERSION / 1000,
                     CUDART_VERSION % 1000 / 10);
}

}  // namespace hpctrain::handles
