// comm_bench: hpctrain's MPI communicator against a plain MPI_Allreduce, the
// external reference, fp32 sum in place, at every size from --min to --max
// (doubling). For each size the contenders run in turn, round after round
// (alternated, so drift in the machine's load hits all alike); each contender's
// figure is its best round, as nccl-tests and the MPI literature report.
// Metrics as nccl-tests defines them (src/comm/allreduce_bandwidth.h): time per
// operation on the slowest rank, busbw = size / time * 2(n-1)/n. The ratio is
// the contender's busbw over plain MPI's (1.00 = as fast as MPI itself).
//
//   mpiexec -n 2 build/bench/comm_bench [--min 4096] [--max 268435456] [--rounds 5]
//                                       [--strategies spin,yield,sleep]
//
// Each strategy is a WaitStrategy of MpiCommunicator: what a waiting rank does
// between two MPI_Test calls (src/comm/mpi_communicator.h).
#include <mpi.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "comm/allreduce_bandwidth.h"
#include "comm/mpi_communicator.h"
#include "handles/mpi.h"

namespace {

using hpctrain::comm::DType;
using hpctrain::comm::ReduceOp;
using hpctrain::comm::WaitStrategy;

// Enough operations per round to time small sizes reliably, at least 3 for the largest.
int iterations_for(std::size_t bytes) {
  constexpr std::size_t kBytesPerRound = std::size_t{512} << 20;
  return static_cast<int>(std::clamp<std::size_t>(kBytesPerRound / bytes, 3, 2000));
}

// Seconds per operation on the slowest rank.
double time_per_op(const std::function<void()>& op, int iterations) {
  op();  // warm-up
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) op();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

struct Contender {
  std::string name;
  std::unique_ptr<hpctrain::comm::MpiCommunicator> comm;  // null: plain MPI_Allreduce
};

WaitStrategy parse_strategy(const std::string& name) {
  for (const auto s : hpctrain::comm::kWaitStrategies) {
    if (name == hpctrain::comm::to_string(s)) return s;
  }
  throw CLI::ValidationError("--strategies", "unknown wait strategy '" + name + "' (spin, yield, sleep)");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hpctrain's MPI communicator against plain MPI_Allreduce, per size"};
  std::size_t min_bytes = 4096;
  std::size_t max_bytes = std::size_t{256} << 20;
  int rounds = 5;
  std::vector<std::string> strategies{"spin"};
  app.add_option("--min", min_bytes, "smallest message, bytes")->check(CLI::Range(4, 1 << 30));
  app.add_option("--max", max_bytes, "largest message, bytes")->check(CLI::Range(4, 1 << 30));
  app.add_option("--rounds", rounds, "rounds per size; each contender's best round counts")->check(CLI::Range(1, 100));
  app.add_option("--strategies", strategies, "wait strategies to measure (spin, yield, sleep)")->delimiter(',');
  CLI11_PARSE(app, argc, argv);

  const hpctrain::handles::MpiRuntime runtime;
  std::vector<Contender> contenders;
  contenders.push_back({"MPI_Allreduce", nullptr});
  for (const auto& s : strategies) {
    contenders.push_back({"hpctrain/" + s, std::make_unique<hpctrain::comm::MpiCommunicator>(
                                               MPI_COMM_WORLD, std::chrono::minutes(5), parse_strategy(s))});
  }
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double bus = hpctrain::comm::bus_bandwidth_factor(size);

  if (rank == 0) {
    fmt::print("# comm_bench: allreduce fp32 sum in place, {} ranks, {}; best of {} alternated rounds\n", size,
               hpctrain::handles::MpiRuntime::library_version(), rounds);
    fmt::print("# busbw GB/s = size / time * 2(n-1)/n, time per op on the slowest rank; ratio = busbw / MPI's\n");
    std::string header = fmt::format("#{:>11} {:>6} {:>10} {:>8}", "size(B)", "iters", "MPI(us)", "MPIbusbw");
    for (std::size_t c = 1; c < contenders.size(); ++c) {
      header += fmt::format(" {:>16} {:>6}", contenders[c].name + "(us)", "ratio");
    }
    fmt::print("{}\n", header);
    (void)std::fflush(stdout);
  }

  std::vector<float> buffer(max_bytes / sizeof(float));
  for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const std::size_t count = bytes / sizeof(float);
    const int n = static_cast<int>(count);
    const int iterations = iterations_for(bytes);
    std::vector<double> best(contenders.size(), std::numeric_limits<double>::infinity());
    for (auto& c : contenders) {
      // Correctness first: every rank contributes rank + 1.
      std::fill_n(buffer.begin(), count, static_cast<float>(rank + 1));
      if (c.comm) {
        c.comm->allreduce(buffer.data(), count, DType::kFloat32, ReduceOp::kSum);
      } else {
        MPI_Allreduce(MPI_IN_PLACE, buffer.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      }
      const float expected = static_cast<float>(size) * static_cast<float>(size + 1) / 2.0F;
      if (std::any_of(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(count),
                      [&](float v) { return v != expected; })) {
        (void)std::fprintf(stderr, "comm_bench: %s gave a wrong sum at %zu bytes\n", c.name.c_str(), bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    // Zeros stay zeros however often they are summed, so timing never overflows.
    std::fill_n(buffer.begin(), count, 0.0F);
    for (int round = 0; round < rounds; ++round) {
      for (std::size_t i = 0; i < contenders.size(); ++i) {
        auto& c = contenders[i];
        const std::function<void()> op =
            c.comm ? std::function<void()>(
                         [&] { c.comm->allreduce(buffer.data(), count, DType::kFloat32, ReduceOp::kSum); })
                   : std::function<void()>(
                         [&] { MPI_Allreduce(MPI_IN_PLACE, buffer.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
        best[i] = std::min(best[i], time_per_op(op, iterations));
      }
    }
    if (rank == 0) {
      const double mpi_busbw = static_cast<double>(bytes) / best[0] / 1e9 * bus;
      std::string line = fmt::format(" {:>11} {:>6} {:>10.1f} {:>8.3f}", bytes, iterations, best[0] * 1e6, mpi_busbw);
      for (std::size_t i = 1; i < contenders.size(); ++i) {
        line += fmt::format(" {:>16.1f} {:>6.2f}", best[i] * 1e6, best[0] / best[i]);
      }
      fmt::print("{}\n", line);
      (void)std::fflush(stdout);
    }
  }
  return 0;
}
