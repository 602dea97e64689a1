// The MPI backend: collectives on CPU buffers over a private duplicate of a
// parent communicator, all issued as non-blocking MPI operations so that waits
// can enforce the timeout.
#pragma once

#include <mpi.h>

#include <chrono>
#include <memory>

#include "comm/communicator.h"
#include "comm/roll_call.h"
#include "handles/mpi.h"

namespace hpctrain::comm {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm parent, std::chrono::milliseconds timeout);

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] const char* backend() const override { return "mpi"; }
  [[nodiscard]] Device device() const override { return Device::kCpu; }

  WorkPtr allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op) override;
  WorkPtr broadcast_async(void* data, std::size_t count, DType dtype, int root) override;
  WorkPtr allgather_async(const void* send, void* recv, std::size_t count, DType dtype) override;
  WorkPtr barrier_async() override;

 private:
  MPI_Datatype mpi_type(DType dtype) const;
  MPI_Op sum_op(DType dtype) const;

  handles::MpiComm comm_;
  int rank_;
  int size_;
  handles::MpiDatatype half_type_;  // two opaque bytes: fp16 and bf16 travel as this
  handles::MpiOp bf16_sum_;
  handles::MpiOp fp16_sum_;
  std::shared_ptr<RollCall> roll_call_;
};

}  // namespace hpctrain::comm
