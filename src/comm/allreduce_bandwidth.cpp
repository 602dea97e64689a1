#include "comm/allreduce_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hpctrain::comm {
namespace {

// Enough repetitions to time small messages reliably without making 64 MiB slow.
int iterations_for(std::size_t bytes) {
  constexpr std::size_t kBytesPerSize = std::size_t{256} << 20;
  return static_cast<int>(std::clamp<std::size_t>(kBytesPerSize / bytes, 5, 200));
}

}  // namespace

double bus_bandwidth_factor(int ranks) { return ranks > 1 ? 2.0 * (ranks - 1) / ranks : 0.0; }

namespace {

class HostBuffer final : public BandwidthBuffer {
 public:
  explicit HostBuffer(std::size_t bytes) : values_(bytes / sizeof(float)) {}
  void* data() override { return values_.data(); }
  void fill(float value, std::size_t count) override { std::fill_n(values_.begin(), count, value); }
  const float* read(std::size_t /*count*/) override { return values_.data(); }

 private:
  std::vector<float> values_;
};

}  // namespace

std::unique_ptr<BandwidthBuffer> host_bandwidth_buffer(std::size_t bytes) {
  return std::make_unique<HostBuffer>(bytes);
}

std::vector<BandwidthRow> measure_allreduce(Communicator& comm, BandwidthBuffer& buffer, std::size_t min_bytes,
                                            std::size_t max_bytes) {
  std::vector<BandwidthRow> rows;
  const int n = comm.size();
  const float expected = static_cast<float>(n) * static_cast<float>(n + 1) / 2.0F;

  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    BandwidthRow row;
    row.bytes = bytes;
    row.count = bytes / sizeof(float);
    row.iterations = iterations_for(bytes);

    buffer.fill(static_cast<float>(comm.rank() + 1), row.count);
    comm.allreduce(buffer.data(), row.count, DType::kFloat32, ReduceOp::kSum);
    const float* result = buffer.read(row.count);
    row.wrong =
        static_cast<std::size_t>(std::count_if(result, result + row.count, [&](float v) { return v != expected; }));

    // Zeros stay zeros however often they are reduced in place, so timing never overflows.
    buffer.fill(0.0F, row.count);
    comm.allreduce(buffer.data(), row.count, DType::kFloat32, ReduceOp::kSum);  // warm-up
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < row.iterations; ++i) comm.allreduce(buffer.data(), row.count, DType::kFloat32, ReduceOp::kSum);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / row.iterations;
    // The interface reduces only sums and averages: gather and take the slowest rank.
    std::vector<float> all(static_cast<std::size_t>(n));
    const auto mine = static_cast<float>(seconds);
    comm.allgather(&mine, all.data(), 1, DType::kFloat32);
    seconds = *std::max_element(all.begin(), all.end());

    row.seconds = seconds;
    row.algbw = static_cast<double>(bytes) / seconds / 1e9;
    row.busbw = row.algbw * bus_bandwidth_factor(n);
    rows.push_back(row);
  }
  return rows;
}

}  // namespace hpctrain::comm
