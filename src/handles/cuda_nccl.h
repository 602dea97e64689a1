// RAII owners for CUDA streams, events and device memory and NCCL
// communicators, calling through the run-time loaded CudaNcclApi (see
// cuda_nccl_api.h). Only built when the CUDA and NCCL headers are found
// (HPCTRAIN_HAVE_NCCL). Each owner keeps the libraries open until it is gone.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "handles/cuda_nccl_api.h"

namespace hpctrain::handles {

using CudaNcclApiPtr = std::shared_ptr<const CudaNcclApi>;

void check_cuda(const CudaNcclApi& api, cudaError_t rc, const std::string& what);
void check_nccl(const CudaNcclApi& api, ncclResult_t rc, const std::string& what);

// A non-blocking stream on the current device: it does not synchronise with the
// legacy default stream, so communication can overlap compute.
class CudaStream {
 public:
  explicit CudaStream(CudaNcclApiPtr api);
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  [[nodiscard]] cudaStream_t get() const { return stream_; }

 private:
  CudaNcclApiPtr api_;
  cudaStream_t stream_ = nullptr;
};

// An event without timing, the cheapest kind for ordering and completion checks.
class CudaEvent {
 public:
  explicit CudaEvent(CudaNcclApiPtr api);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  [[nodiscard]] cudaEvent_t get() const { return event_; }

 private:
  CudaNcclApiPtr api_;
  cudaEvent_t event_ = nullptr;
};

// Device memory from cudaMalloc on the current device.
class CudaBuffer {
 public:
  CudaBuffer(CudaNcclApiPtr api, std::size_t bytes);
  ~CudaBuffer();
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  [[nodiscard]] void* get() const { return data_; }

 private:
  CudaNcclApiPtr api_;
  void* data_ = nullptr;
};

class NcclComm {
 public:
  NcclComm(CudaNcclApiPtr api, int size, const ncclUniqueId& id, int rank);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  [[nodiscard]] ncclComm_t get() const { return comm_; }
  // Aborts outstanding work so a hung collective cannot block teardown.
  void abort() noexcept;

 private:
  CudaNcclApiPtr api_;
  ncclComm_t comm_ = nullptr;
};

}  // namespace hpctrain::handles
