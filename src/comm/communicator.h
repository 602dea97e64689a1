// The collective-communication interface every layer above uses. Backends work
// on raw buffers (pointer, count, dtype) on one device; they never see LibTorch.
//
// Every operation has a non-blocking form returning a Work handle. A collective
// that does not complete within the communicator's timeout ends the job with a
// message naming the operation and the ranks still missing (see roll_call.h):
// nothing in this interface can hang forever.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "comm/dtype.h"

namespace hpctrain::comm {

class Work {
 public:
  virtual ~Work() = default;
  // True once the operation has completed (and its result is in place).
  virtual bool test() = 0;
  // Blocks until completion, or ends the job when the timeout passes.
  virtual void wait() = 0;
};
using WorkPtr = std::unique_ptr<Work>;

class Communicator {
 public:
  virtual ~Communicator() = default;

  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual const char* backend() const = 0;
  [[nodiscard]] virtual Device device() const = 0;
  // How a wait for a pending collective spends its time (doctor prints it).
  [[nodiscard]] virtual std::string wait_strategy() const = 0;

  // In place: every rank ends with the reduction of all ranks' `data`.
  virtual WorkPtr allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op) = 0;
  // In place: every rank ends with `root`'s `data`.
  virtual WorkPtr broadcast_async(void* data, std::size_t count, DType dtype, int root) = 0;
  // `recv` holds size() * count elements, rank r's `send` at offset r * count.
  // In place when `send` is that very block, recv + rank() * count.
  virtual WorkPtr allgather_async(const void* send, void* recv, std::size_t count, DType dtype) = 0;
  // `send` holds size() * count elements; rank r's `recv` (count elements)
  // ends with the reduction of every rank's block r.
  virtual WorkPtr reduce_scatter_async(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op) = 0;
  virtual WorkPtr barrier_async() = 0;

  void allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) {
    allreduce_async(data, count, dtype, op)->wait();
  }
  void broadcast(void* data, std::size_t count, DType dtype, int root) {
    broadcast_async(data, count, dtype, root)->wait();
  }
  void allgather(const void* send, void* recv, std::size_t count, DType dtype) {
    allgather_async(send, recv, count, dtype)->wait();
  }
  void reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op) {
    reduce_scatter_async(send, recv, count, dtype, op)->wait();
  }
  void barrier() { barrier_async()->wait(); }
};

}  // namespace hpctrain::comm
