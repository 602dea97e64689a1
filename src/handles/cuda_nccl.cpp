#include "handles/cuda_nccl.h"

#include <fmt/format.h>

#include <utility>

namespace hpctrain::handles {

void check_cuda(const CudaNcclApi& api, cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) throw CudaError(fmt::format("{}: {}", what, api.get_error_string(rc)));
}

void check_nccl(const CudaNcclApi& api, ncclResult_t rc, const std::string& what) {
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

NcclComm::NcclComm(CudaNcclApiPtr api, int size, const ncclUniqueId& id, int rank) : api_(std::move(api)) {
  check_nccl(*api_, api_->nccl_comm_init_rank(&comm_, size, id, rank), "ncclCommInitRank");
}

NcclComm::~NcclComm() {
  if (comm_ != nullptr) api_->nccl_comm_destroy(comm_);
}

void NcclComm::abort() noexcept {
  if (comm_ != nullptr) {
    api_->nccl_comm_abort(comm_);
    comm_ = nullptr;
  }
}

}  // namespace hpctrain::handles
