// The NCCL backend: collectives on GPU buffers, on a stream of its own. The
// communicator is built over MPI (rank 0's ncclUniqueId travels by MPI_Bcast),
// and MPI also carries the roll call that names missing ranks on a timeout.
//
// libnccl and libcudart are opened when the first NcclCommunicator is made
// (handles/cuda_nccl_api.h), so a CPU run never needs them.
//
// Ordering: each operation first waits (on the device, not the host) for the
// work already queued on the legacy default stream, which is where LibTorch
// puts the backward pass unless told otherwise. The gradients are then ready
// when NCCL reads them, without LibTorch's CUDA build being needed here.
#pragma once

#include <mpi.h>

#include <chrono>
#include <memory>

#include "comm/communicator.h"
#include "comm/roll_call.h"
#include "handles/cuda_nccl.h"

namespace hpctrain::comm {

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(MPI_Comm parent, int cuda_device, std::chrono::milliseconds timeout);
  ~NcclCommunicator() override;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] const char* backend() const override { return "nccl"; }
  [[nodiscard]] Device device() const override { return Device::kCuda; }
  [[nodiscard]] std::string wait_strategy() const override { return "cudaEventQuery, 20 us sleeps"; }

  WorkPtr allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op) override;
  WorkPtr broadcast_async(void* data, std::size_t count, DType dtype, int root) override;
  WorkPtr allgather_async(const void* send, void* recv, std::size_t count, DType dtype) override;
  WorkPtr reduce_scatter_async(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op) override;
  WorkPtr barrier_async() override;

 private:
  // Makes the communication stream wait for work queued on the default stream.
  void order_after_default_stream();
  WorkPtr finish(std::uint64_t seq, std::string what);

  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
  handles::CudaNcclApiPtr api_;  // the libraries, opened at run time; outlives the handles below
  std::shared_ptr<RollCall> roll_call_;
  std::unique_ptr<handles::CudaStream> stream_;
  std::unique_ptr<handles::CudaEvent> ready_;
  std::unique_ptr<handles::CudaBuffer> barrier_word_;
  std::shared_ptr<handles::NcclComm> nccl_;
};

}  // namespace hpctrain::comm
