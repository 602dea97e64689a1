// The collective-communication interface every layer above uses. Backends work
// on raw buffers (pointer, count, dtype) on one device; they never see LibTorch.
//
// Every operation has a non-blocking form returning a Work handle. A collective
// that does not complete within the communicator's timeout ends the job with a
// message naming the operation and the ranks still missing (see roll_call.h):
// nothing in this interface can hang forever.
//
// Every communicator counts the bytes this rank sends, by the algorithm's
// nominal volume (the bus-bandwidth convention of nccl-tests, for S bytes per
// rank and W ranks): allreduce 2(W-1)/W * S, allgather, reduce_scatter and
// alltoall (W-1)/W * S of the whole buffer, broadcast S, barrier 0; nothing on
// one rank. What a backend's chosen algorithm really puts on the wire can
// differ in its constant, not in how it scales.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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
  WorkPtr allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op);
  // In place: every rank ends with `root`'s `data`.
  WorkPtr broadcast_async(void* data, std::size_t count, DType dtype, int root);
  // `recv` holds size() * count elements, rank r's `send` at offset r * count.
  // In place when `send` is that very block, recv + rank() * count.
  WorkPtr allgather_async(const void* send, void* recv, std::size_t count, DType dtype);
  // `send` holds size() * count elements; rank r's `recv` (count elements)
  // ends with the reduction of every rank's block r.
  WorkPtr reduce_scatter_async(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op);
  // `send` and `recv` each hold size() * count elements: block r of `send`
  // goes to rank r, and block r of `recv` comes from rank r. Not in place.
  WorkPtr alltoall_async(const void* send, void* recv, std::size_t count, DType dtype);
  WorkPtr barrier_async() { return start_barrier(); }

  // Bytes this rank has sent through this communicator since it was made
  // (the nominal volume above). Any thread may read it.
  [[nodiscard]] std::uint64_t bytes_sent() const { return bytes_sent_.load(std::memory_order_relaxed); }

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
  void alltoall(const void* send, void* recv, std::size_t count, DType dtype) {
    alltoall_async(send, recv, count, dtype)->wait();
  }
  void barrier() { barrier_async()->wait(); }

 protected:
  // The backend's collectives, with the meaning of the public forms above.
  virtual WorkPtr start_allreduce(void* data, std::size_t count, DType dtype, ReduceOp op) = 0;
  virtual WorkPtr start_broadcast(void* data, std::size_t count, DType dtype, int root) = 0;
  virtual WorkPtr start_allgather(const void* send, void* recv, std::size_t count, DType dtype) = 0;
  virtual WorkPtr start_reduce_scatter(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op) = 0;
  virtual WorkPtr start_alltoall(const void* send, void* recv, std::size_t count, DType dtype) = 0;
  virtual WorkPtr start_barrier() = 0;

 private:
  // Adds `numerator` / size() of `bytes` (nothing on one rank).
  void count_sent(std::size_t bytes, std::uint64_t numerator);
  // An exchange of `count` elements per rank (allgather, reduce-scatter,
  // alltoall): (W-1)/W of the whole buffer.
  void count_exchanged(std::size_t count, DType dtype);

  std::atomic<std::uint64_t> bytes_sent_{0};
};

}  // namespace hpctrain::comm
