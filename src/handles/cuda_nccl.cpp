#include "handles/cuda_nccl.h"

#include <fmt/format.h>

namespace hpctrain::handles {

void check_cuda(cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) throw CudaError(fmt::format("{}: {}", what, cudaGetErrorString(rc)));
}

void check_nccl(ncclResult_t rc, const std::string& what) {
  if (rc != ncclSuccess && rc != ncclInProgress) {
    throw CudaError(fmt::format("{}: {}", what, ncclGetErrorString(rc)));
  }
}

CudaStream::CudaStream() { check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
CudaStream::~CudaStream() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

CudaEvent::CudaEvent() { check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate"); }
CudaEvent::~CudaEvent() {
  if (event_ != nullptr) cudaEventDestroy(event_);
}

CudaBuffer::CudaBuffer(std::size_t bytes) { check_cuda(cudaMalloc(&data_, bytes), "cudaMalloc"); }
CudaBuffer::~CudaBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

NcclComm::NcclComm(int size, const ncclUniqueId& id, int rank) {
  check_nccl(ncclCommInitRank(&comm_, size, id, rank), "ncclCommInitRank");
}

NcclComm::~NcclComm() {
  if (comm_ != nullptr) ncclCommDestroy(comm_);
}

void NcclComm::abort() noexcept {
  if (comm_ != nullptr) {
    ncclCommAbort(comm_);
    comm_ = nullptr;
  }
}

}  // namespace hpctrain::handles
