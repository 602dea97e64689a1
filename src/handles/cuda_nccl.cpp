#include "handles/cuda_nccl.h"

#include <fmt/format.h>

#include <thread>
#include <utility>

namespace hpctrain::handles {

void check_cuda(const CudaNcclApi& api, cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) throw CudaError(fmt::format("{}: {}", what, api.get_error_string(rc)));
}

void check_nccl(const CudaNcclApi& api, ncclResult_t rc, const std::string& what) {
  // In non-blocking mode ncclInProgress is not a failure: whoever issued the
  // call waits for NcclComm::state() (see NcclComm).
  if (rc != ncclSuccess && rc != ncclInProgress) {
    throw CudaError(fmt::format("{}: {}", what, api.nccl_get_error_string(rc)));
  }
}

CudaStream::CudaStream(CudaNcclApiPtr api) : api_(std::move(api)) {
  check_cuda(*api_, api_->stream_create_with_flags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
}
CudaStream::~CudaStream() {
  if (stream_ != nullptr) api_->stream_destroy(stream_);
}

CudaEvent::CudaEvent(CudaNcclApiPtr api) : api_(std::move(api)) {
  check_cuda(*api_, api_->event_create_with_flags(&event_, cudaEventDisableTiming), "cudaEventCreate");
}
CudaEvent::~CudaEvent() {
  if (event_ != nullptr) api_->event_destroy(event_);
}

CudaBuffer::CudaBuffer(CudaNcclApiPtr api, std::size_t bytes) : api_(std::move(api)) {
  check_cuda(*api_, api_->device_malloc(&data_, bytes), "cudaMalloc");
}
CudaBuffer::~CudaBuffer() {
  if (data_ != nullptr) api_->device_free(data_);
}

NcclComm::NcclComm(CudaNcclApiPtr api, int size, const ncclUniqueId& id, int rank,
                   std::chrono::milliseconds teardown_bound)
    : api_(std::move(api)), teardown_bound_(teardown_bound) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  check_nccl(*api_, api_->nccl_comm_init_rank_config(&comm_, size, id, rank, &config), "ncclCommInitRankConfig");
}

NcclComm::~NcclComm() {
  if (comm_ == nullptr || aborted_.load()) return;
  // Finalize flushes this rank's work and waits for the others to be done
  // with theirs; a rank that is gone would keep it waiting for good.
  bool finalized = false;
  const ncclResult_t started = api_->nccl_comm_finalize(comm_);
  if (started == ncclSuccess || started == ncclInProgress) {
    const auto until = std::chrono::steady_clock::now() + teardown_bound_;
    ncclResult_t now = state();
    while (now == ncclInProgress && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      now = state();
    }
    finalized = now == ncclSuccess;
  }
  if (finalized) {
    api_->nccl_comm_destroy(comm_);
  } else {
    abort();
  }
}

ncclResult_t NcclComm::state() const {
  if (aborted_.load()) return ncclInvalidUsage;
  ncclResult_t state = ncclSuccess;
  const ncclResult_t rc = api_->nccl_comm_get_async_error(comm_, &state);
  return rc == ncclSuccess ? state : rc;
}

void NcclComm::abort() noexcept {
  if (comm_ != nullptr && !aborted_.exchange(true)) api_->nccl_comm_abort(comm_);
}

}  // namespace hpctrain::handles
