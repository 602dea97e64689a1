// RAII owners for CUDA streams and events and NCCL communicators. Only built
// when CUDA and NCCL are found (HPCTRAIN_HAVE_NCCL).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace hpctrain::handles {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void check_cuda(cudaError_t rc, const std::string& what);
void check_nccl(ncclResult_t rc, const std::string& what);

// A non-blocking stream on the current device: it does not synchronise with the
// legacy default stream, so communication can overlap compute.
class CudaStream {
 public:
  CudaStream();
  ~CudaStream();
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  [[nodiscard]] cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An event without timing, the cheapest kind for ordering and completion checks.
class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  [[nodiscard]] cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Device memory from cudaMalloc on the current device.
class CudaBuffer {
 public:
  explicit CudaBuffer(std::size_t bytes);
  ~CudaBuffer();
  CudaBuffer(const CudaBuffer&) = delete;
  CudaBuffer& operator=(const CudaBuffer&) = delete;
  [[nodiscard]] void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

class NcclComm {
 public:
  NcclComm(int size, const ncclUniqueId& id, int rank);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  [[nodiscard]] ncclComm_t get() const { return comm_; }
  // Aborts outstanding work so a hung collective cannot block teardown.
  void abort() noexcept;

 private:
  ncclComm_t comm_ = nullptr;
};

}  // namespace hpctrain::handles
