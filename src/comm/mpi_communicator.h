// The MPI backend: collectives on CPU buffers over a private duplicate of a
// parent communicator, all issued as non-blocking MPI operations and completed
// by polling MPI_Test, so that a wait can enforce the timeout.
#pragma once

#include <mpi.h>

#include <chrono>
#include <memory>

#include "comm/communicator.h"
#include "comm/roll_call.h"
#include "handles/mpi.h"

namespace hpctrain::comm {

// What a rank does between two MPI_Test calls while it waits for a collective.
// MPICH moves a non-blocking collective forward only inside MPI calls, so any
// pause delays it; docs/bootstrap.md gives the measurements behind the default.
enum class WaitStrategy {
  kSpin,   // nothing: test back to back
  kYield,  // spin for 50 us, then sched_yield() between tests: hand the core to
           // another runnable thread, if any (the default)
  kSleep,  // sleep 1/8 of the time waited so far, 20 us to 500 us
};
inline constexpr WaitStrategy kWaitStrategies[] = {WaitStrategy::kSpin, WaitStrategy::kYield, WaitStrategy::kSleep};
inline constexpr WaitStrategy kDefaultWaitStrategy = WaitStrategy::kYield;
const char* to_string(WaitStrategy strategy);  // its name in parallel.comm_wait and on command lines

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(MPI_Comm parent, std::chrono::milliseconds timeout, WaitStrategy strategy = kDefaultWaitStrategy);

  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] const char* backend() const override { return "mpi"; }
  [[nodiscard]] Device device() const override { return Device::kCpu; }
  [[nodiscard]] std::string wait_strategy() const override { return to_string(strategy_); }

 protected:
  WorkPtr start_allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) override;
  WorkPtr start_broadcast(void* data, std::size_t count, DType dtype, int root) override;
  WorkPtr start_allgather(const void* send, void* recv, std::size_t count, DType dtype) override;
  WorkPtr start_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op) override;
  WorkPtr start_alltoall(const void* send, void* recv, std::size_t count, DType dtype) override;
  WorkPtr start_barrier() override;

 private:
  MPI_Datatype mpi_type(DType dtype) const;
  MPI_Op sum_op(DType dtype) const;

  handles::MpiComm comm_;
  int rank_;
  int size_;
  handles::MpiDatatype half_type_;  // two opaque bytes: fp16 and bf16 travel as this
  handles::MpiOp bf16_sum_;
  handles::MpiOp fp16_sum_;
  WaitStrategy strategy_;
  std::shared_ptr<RollCall> roll_call_;
};

}  // namespace hpctrain::comm
