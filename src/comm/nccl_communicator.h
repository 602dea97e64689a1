// The NCCL backend: collectives on GPU buffers, on a stream of its own. The
// communicator is built over MPI (rank 0's ncclUniqueId travels by MPI), and
// MPI also carries the roll call that names missing ranks on a timeout.
//
// libnccl and libcudart are opened when the first NcclCommunicator is made
// (handles/cuda_nccl_api.h), so a CPU run never needs them.
//
// Start-up cannot hang:
//  1. every step that can fail on one rank alone (opening the libraries,
//     choosing this rank's GPU, creating its stream) runs first, and the ranks
//     agree on the outcome over MPI before any of them waits on another: a
//     failure stops every rank with one message naming the failed ranks;
//  2. the unique id travels by the world's MPI communicator, under its timeout;
//  3. the communicator is created in NCCL's non-blocking mode and polled under
//     the collective timeout, which, when it runs out, names the ranks that
//     never arrived and ends the job.
// Every later call may also return ncclInProgress in that mode: it is polled
// the same way until its work is queued, and only then is its completion
// event recorded.
//
// Ordering: each operation first waits (on the device, not the host) for the
// work already queued on the compute stream, the stream LibTorch computes on
// (its current stream when the reducer was built; the reducer passes it in, so
// this layer needs no LibTorch). The gradients are then ready when NCCL reads them.
//
// Testing without a GPU: HPCTRAIN_TEST_FAIL_CUDA_DEVICE=<rank> makes that
// rank's device selection fail (step 1) as a missing or broken GPU would.
#pragma once

#include <mpi.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "comm/roll_call.h"
#include "comm/world.h"
#include "handles/cuda_nccl.h"

namespace hpctrain::comm {

class NcclCommunicator final : public Communicator {
 public:
  // Collective over `world`: every rank calls it. Throws comm::BootstrapError on
  // every rank when step 1 fails on any. `compute_stream`: see Ordering above;
  // the legacy default stream is where LibTorch computes unless told otherwise.
  explicit NcclCommunicator(World& world, cudaStream_t compute_stream = cudaStreamLegacy);
  ~NcclCommunicator() override;

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] const char* backend() const override { return "nccl"; }
  [[nodiscard]] Device device() const override { return Device::kCuda; }
  [[nodiscard]] std::string wait_strategy() const override { return "cudaEventQuery, 20 us sleeps"; }
  // The GPU this rank drives, and the libraries it drives it with.
  [[nodiscard]] int cuda_device() const { return device_; }
  [[nodiscard]] const handles::CudaNcclApiPtr& api() const { return api_; }

 protected:
  WorkPtr start_allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) override;
  WorkPtr start_broadcast(void* data, std::size_t count, DType dtype, int root) override;
  WorkPtr start_allgather(const void* send, void* recv, std::size_t count, DType dtype) override;
  WorkPtr start_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op) override;
  // One NCCL group of a send to and a receive from every rank (NCCL has no alltoall).
  WorkPtr start_alltoall(const void* send, void* recv, std::size_t count, DType dtype) override;
  WorkPtr start_barrier() override;

 private:
  // Makes the communication stream wait for the work queued on the compute stream.
  void order_after_compute();
  // An alltoall as NCCL spells one: a group of a send and a receive per rank.
  ncclResult_t alltoall_group(const void* send, void* recv, std::size_t count, DType dtype, ncclComm_t comm,
                              cudaStream_t stream) const;
  // Waits, under the timeout, until the call that returned `rc` has done its
  // part (created the communicator, or queued a collective); any error ends the job.
  void settle(std::uint64_t seq, const std::string& what, ncclResult_t rc);
  [[noreturn]] void fail(std::uint64_t seq, const std::string& what, Clock::time_point started,
                         const std::string& error);
  // One collective: enters it in the roll call, orders it after the compute
  // stream, makes `call` on the communication stream, waits until it is
  // queued, and returns its completion. Any error ends the job through the roll call.
  using Call = std::function<ncclResult_t(ncclComm_t, cudaStream_t)>;
  WorkPtr issue(const std::string& what, const Call& call);

  int rank_ = 0;
  int size_ = 1;
  int device_ = 0;
  std::chrono::milliseconds timeout_;
  cudaStream_t compute_stream_;
  handles::CudaNcclApiPtr api_;  // the libraries, opened at run time; outlives the handles below
  std::shared_ptr<RollCall> roll_call_;
  std::unique_ptr<handles::CudaStream> stream_;
  std::unique_ptr<handles::CudaEvent> ready_;
  std::unique_ptr<handles::CudaBuffer> barrier_word_;
  std::shared_ptr<handles::NcclComm> nccl_;
};

}  // namespace hpctrain::comm
