// Allreduce bandwidth with nccl-tests' definitions (doc/PERFORMANCE.md there):
//   algbw = bytes / time
//   busbw = algbw * 2 (n - 1) / n
// busbw is comparable to the link's bandwidth whatever the rank count n. The time
// is the mean per operation on the slowest rank.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace hpctrain::comm {

struct BandwidthRow {
  std::size_t bytes = 0;
  std::size_t count = 0;  // elements
  int iterations = 0;
  double seconds = 0;     // per operation, slowest rank
  double algbw = 0;       // GB/s (1e9 bytes per second)
  double busbw = 0;       // GB/s
  std::size_t wrong = 0;  // elements with a wrong sum in the verification pass
};

double bus_bandwidth_factor(int ranks);

// The fp32 buffer a measurement reduces in: host memory for MPI, device memory
// for NCCL (comm/cuda_bandwidth_buffer.h).
class BandwidthBuffer {
 public:
  virtual ~BandwidthBuffer() = default;
  [[nodiscard]] virtual void* data() = 0;
  // Sets the first `count` elements to `value`.
  virtual void fill(float value, std::size_t count) = 0;
  // The first `count` elements, readable on the host.
  [[nodiscard]] virtual const float* read(std::size_t count) = 0;
};

std::unique_ptr<BandwidthBuffer> host_bandwidth_buffer(std::size_t bytes);

// Measures fp32 sum allreduce from `min_bytes` to `max_bytes`, doubling, in
// `buffer` (at least `max_bytes`). Every size is first verified (each rank
// contributes rank+1), then timed after a warm-up. Collective: all ranks must
// call it with the same arguments.
std::vector<BandwidthRow> measure_allreduce(Communicator& comm, BandwidthBuffer& buffer, std::size_t min_bytes,
                                            std::size_t max_bytes);

}  // namespace hpctrain::comm
