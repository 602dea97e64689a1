// The MPI backend's collectives, for every dtype and reduction, blocking and not.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <thread>

#include "comm/mpi_communicator.h"

namespace hpctrain::comm {
namespace {

class MpiCommunicatorTest : public ::testing::Test {
 protected:
  MpiCommunicator comm{MPI_COMM_WORLD, std::chrono::seconds(60)};
  int rank = comm.rank();
  int n = comm.size();
  // 1 + 2 + ... + n: the sum of every rank's (rank + 1).
  int triangle = n * (n + 1) / 2;
};

TEST_F(MpiCommunicatorTest, SizeAndRankMatchTheWorld) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  EXPECT_EQ(n, world);
  EXPECT_GE(n, 2) << "run this binary under mpiexec with at least 2 ranks";
  EXPECT_STREQ(comm.backend(), "mpi");
}

TEST_F(MpiCommunicatorTest, AllreduceFp32SumAndAverage) {
  std::vector<float> v(1000, static_cast<float>(rank + 1));
  comm.allreduce(v.data(), v.size(), DType::kFloat32, ReduceOp::kSum);
  for (float x : v) ASSERT_EQ(x, static_cast<float>(triangle));
  std::vector<float> a(1000, static_cast<float>(rank));
  comm.allreduce(a.data(), a.size(), DType::kFloat32, ReduceOp::kAverage);
  for (float x : a) ASSERT_FLOAT_EQ(x, static_cast<float>(n - 1) / 2.0F);
}

TEST_F(MpiCommunicatorTest, AllreduceInt64) {
  std::vector<std::int64_t> v(17, (std::int64_t{1} << 40) * (rank + 1));
  comm.allreduce(v.data(), v.size(), DType::kInt64, ReduceOp::kSum);
  for (auto x : v) ASSERT_EQ(x, (std::int64_t{1} << 40) * std::int64_t{triangle});
  std::vector<std::int64_t> a(3, std::int64_t{10} * rank);
  comm.allreduce(a.data(), a.size(), DType::kInt64, ReduceOp::kAverage);
  for (auto x : a) ASSERT_EQ(x, std::int64_t{10} * (n - 1) / 2);  // sum / n, truncated
}

TEST_F(MpiCommunicatorTest, AllreduceBf16AndFp16) {
  for (DType dtype : {DType::kBFloat16, DType::kFloat16}) {
    auto encode = [&](float f) { return dtype == DType::kBFloat16 ? float_to_bf16(f) : float_to_half(f); };
    auto decode = [&](std::uint16_t h) { return dtype == DType::kBFloat16 ? bf16_to_float(h) : half_to_float(h); };
    std::vector<std::uint16_t> v(4096, encode(static_cast<float>(rank + 1)));
    comm.allreduce(v.data(), v.size(), dtype, ReduceOp::kSum);
    for (auto x : v) ASSERT_EQ(decode(x), static_cast<float>(triangle)) << to_string(dtype);
    std::vector<std::uint16_t> a(5, encode(static_cast<float>(2 * rank)));
    comm.allreduce(a.data(), a.size(), dtype, ReduceOp::kAverage);
    for (auto x : a) ASSERT_EQ(decode(x), static_cast<float>(n - 1)) << to_string(dtype);
  }
}

TEST_F(MpiCommunicatorTest, BroadcastFromTheLastRank) {
  std::vector<float> v(100, static_cast<float>(rank));
  comm.broadcast(v.data(), v.size(), DType::kFloat32, n - 1);
  for (float x : v) ASSERT_EQ(x, static_cast<float>(n - 1));
}

TEST_F(MpiCommunicatorTest, AllgatherPlacesEachRankInOrder) {
  const std::int64_t mine[2] = {rank, 100 + rank};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(n));
  comm.allgather(mine, all.data(), 2, DType::kInt64);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(all[2 * static_cast<std::size_t>(r)], r);
    EXPECT_EQ(all[2 * static_cast<std::size_t>(r) + 1], 100 + r);
  }
}

TEST_F(MpiCommunicatorTest, AlltoallSendsBlockRToRankR) {
  // Block r of this rank's send holds (this rank, r); block r of recv must hold (r, this rank).
  std::vector<std::uint8_t> send(3 * static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    send[3 * static_cast<std::size_t>(r)] = static_cast<std::uint8_t>(rank);
    send[3 * static_cast<std::size_t>(r) + 1] = static_cast<std::uint8_t>(r);
    send[3 * static_cast<std::size_t>(r) + 2] = 0xA5;
  }
  std::vector<std::uint8_t> recv(send.size());
  comm.alltoall(send.data(), recv.data(), 3, DType::kUInt8);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(recv[3 * static_cast<std::size_t>(r)], r);
    EXPECT_EQ(recv[3 * static_cast<std::size_t>(r) + 1], rank);
    EXPECT_EQ(recv[3 * static_cast<std::size_t>(r) + 2], 0xA5);
  }
}

TEST_F(MpiCommunicatorTest, BytesSentFollowTheBusBandwidthConvention) {
  // The nominal volume per rank, written out for W ranks and S bytes a rank holds.
  MpiCommunicator fresh(MPI_COMM_WORLD, std::chrono::seconds(60));
  const auto w = static_cast<std::uint64_t>(n);
  std::vector<float> v(1000, 1.0F);
  fresh.allreduce(v.data(), v.size(), DType::kFloat32, ReduceOp::kSum);
  std::uint64_t expected = n > 1 ? std::uint64_t{8000} * (w - 1) / w : 0;
  EXPECT_EQ(fresh.bytes_sent(), expected);
  fresh.broadcast(v.data(), v.size(), DType::kFloat32, 0);
  expected += n > 1 ? 4000 : 0;
  EXPECT_EQ(fresh.bytes_sent(), expected);
  std::vector<std::uint8_t> send(100 * w), recv(100 * w);
  fresh.alltoall(send.data(), recv.data(), 100, DType::kUInt8);
  expected += 100 * (w - 1);
  EXPECT_EQ(fresh.bytes_sent(), expected);
  fresh.allgather(send.data(), recv.data(), 100, DType::kUInt8);
  expected += 100 * (w - 1);
  EXPECT_EQ(fresh.bytes_sent(), expected);
  fresh.barrier();
  EXPECT_EQ(fresh.bytes_sent(), expected);
}

TEST_F(MpiCommunicatorTest, NonBlockingOperationsOverlapAndComplete) {
  std::vector<float> a(1 << 16, 1.0F);
  std::vector<float> b(1 << 10, static_cast<float>(rank));
  auto first = comm.allreduce_async(a.data(), a.size(), DType::kFloat32, ReduceOp::kSum);
  auto second = comm.allreduce_async(b.data(), b.size(), DType::kFloat32, ReduceOp::kAverage);
  while (!second->test()) std::this_thread::yield();
  first->wait();
  EXPECT_TRUE(first->test());
  for (float x : a) ASSERT_EQ(x, static_cast<float>(n));
  for (float x : b) ASSERT_FLOAT_EQ(x, static_cast<float>(n - 1) / 2.0F);
  comm.barrier_async()->wait();
}

TEST_F(MpiCommunicatorTest, AnAverageIsAppliedExactlyOnce) {
  std::vector<float> v(8, static_cast<float>(n));
  auto work = comm.allreduce_async(v.data(), v.size(), DType::kFloat32, ReduceOp::kAverage);
  work->wait();
  work->wait();
  EXPECT_TRUE(work->test());
  for (float x : v) ASSERT_EQ(x, static_cast<float>(n));
}

}  // namespace
}  // namespace hpctrain::comm
