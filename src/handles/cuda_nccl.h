// RAII owners for CUDA streams, events and device memory and NCCL
// communicators, calling through the run-time loaded CudaNcclApi (see
// cuda_nccl_api.h). Only built when the CUDA and NCCL headers are found
// (HPCTRAIN_HAVE_NCCL). Each owner keeps the libraries open until it is gone.
#pragma once

#include <atomic>
#include <chrono>
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

// A communicator in NCCL's non-blocking mode: creation and every call may
// return before their work is queued (ncclInProgress), and state() says when
// it is done, so whoever waits can keep a timeout. A blocking
// ncclCommInitRank would wait forever for a rank that never comes.
class NcclComm {
 public:
  // Starts creating this rank's communicator; state() is ncclSuccess once it exists.
  NcclComm(CudaNcclApiPtr api, int size, const ncclUniqueId& id, int rank, std::chrono::milliseconds teardown_bound);
  // Finalizes and frees the communicator, waiting at most the teardown bound
  // for the other ranks before aborting it instead; nothing after abort().
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  [[nodiscard]] ncclComm_t get() const { return comm_; }
  // ncclSuccess when creation and every call so far are done (queued, for
  // collectives); ncclInProgress while one is still going; otherwise the error.
  [[nodiscard]] ncclResult_t state() const;
  // Aborts outstanding work so a hung collective cannot block teardown. Only
  // the first call aborts, from whichever thread. ncclCommAbort frees the
  // communicator: it is the last thing done before the job ends (the roll
  // call's failure path), and state() reports an error from then on.
  void abort() noexcept;

 private:
  CudaNcclApiPtr api_;
  ncclComm_t comm_ = nullptr;
  std::chrono::milliseconds teardown_bound_;
  std::atomic<bool> aborted_{false};
};

}  // namespace hpctrain::handles
