// The byte count every communicator keeps, around the backend's collectives.
#include "comm/communicator.h"

namespace hpctrain::comm {

void Communicator::count_sent(std::size_t bytes, std::uint64_t numerator) {
  const auto ranks = static_cast<std::uint64_t>(size());
  if (ranks < 2) return;
  // Buffers are at most a few GiB, so bytes * 2(W - 1) stays far below 2^64.
  bytes_sent_.fetch_add(static_cast<std::uint64_t>(bytes) * numerator / ranks, std::memory_order_relaxed);
}

WorkPtr Communicator::allreduce_async(void* data, std::size_t count, DType dtype, ReduceOp op) {
  count_sent(count * element_size(dtype), 2 * (static_cast<std::uint64_t>(size()) - 1));
  return start_allreduce(data, count, dtype, op);
}

WorkPtr Communicator::broadcast_async(void* data, std::size_t count, DType dtype, int root) {
  count_sent(count * element_size(dtype), static_cast<std::uint64_t>(size()));
  return start_broadcast(data, count, dtype, root);
}

void Communicator::count_exchanged(std::size_t count, DType dtype) {
  const auto ranks = static_cast<std::uint64_t>(size());
  count_sent(count * element_size(dtype) * ranks, ranks - 1);
}

WorkPtr Communicator::allgather_async(const void* send, void* recv, std::size_t count, DType dtype) {
  count_exchanged(count, dtype);
  return start_allgather(send, recv, count, dtype);
}

WorkPtr Communicator::reduce_scatter_async(const void* send, void* recv, std::size_t count, DType dtype, ReduceOp op) {
  count_exchanged(count, dtype);
  return start_reduce_scatter(send, recv, count, dtype, op);
}

WorkPtr Communicator::alltoall_async(const void* send, void* recv, std::size_t count, DType dtype) {
  count_exchanged(count, dtype);
  return start_alltoall(send, recv, count, dtype);
}

}  // namespace hpctrain::comm
