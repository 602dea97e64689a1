// ZeRO-1 (parallel.zero = 1) against plain DDP: the same training to fp32
// rounding, deterministic, with 1/N of the optimizer state per rank, and the
// gradients carried by reduce-scatters, counted at the communicator.
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>

#include <atomic>

#include "comm/mpi_communicator.h"
#include "optim/optimizer.h"
#include "reduce/ddp_reducer.h"
#include "reduce/flat_parameters.h"
#include "tiny_model.h"

namespace hpctrain::reduce {
namespace {

constexpr double kMaxNorm = 0.25;  // below most steps' gradient norm at 2 to 4 ranks

// Passes every call on to `inner` and counts the collectives by kind.
class CountingCommunicator final : public comm::Communicator {
 public:
  explicit CountingCommunicator(comm::Communicator& inner) : inner_(inner) {}
  [[nodiscard]] int rank() const override { return inner_.rank(); }
  [[nodiscard]] int size() const override { return inner_.size(); }
  [[nodiscard]] const char* backend() const override { return inner_.backend(); }
  [[nodiscard]] comm::Device device() const override { return inner_.device(); }
  [[nodiscard]] std::string wait_strategy() const override { return inner_.wait_strategy(); }

 protected:
  comm::WorkPtr start_allreduce(void* data, std::size_t count, comm::DType dtype, comm::ReduceOp op) override {
    ++allreduces;
    return inner_.allreduce_async(data, count, dtype, op);
  }
  comm::WorkPtr start_broadcast(void* data, std::size_t count, comm::DType dtype, int root) override {
    return inner_.broadcast_async(data, count, dtype, root);
  }
  comm::WorkPtr start_allgather(const void* send, void* recv, std::size_t count, comm::DType dtype) override {
    ++allgathers;
    return inner_.allgather_async(send, recv, count, dtype);
  }
  comm::WorkPtr start_reduce_scatter(const void* send, void* recv, std::size_t count, comm::DType dtype,
                                     comm::ReduceOp op) override {
    ++reduce_scatters;
    return inner_.reduce_scatter_async(send, recv, count, dtype, op);
  }
  comm::WorkPtr start_alltoall(const void* send, void* recv, std::size_t count, comm::DType dtype) override {
    return inner_.alltoall_async(send, recv, count, dtype);
  }
  comm::WorkPtr start_barrier() override { return inner_.barrier_async(); }

 public:
  std::atomic<int> allreduces{0};
  std::atomic<int> allgathers{0};
  std::atomic<int> reduce_scatters{0};

 private:
  comm::Communicator& inner_;
};

struct TrainResult {
  std::vector<double> losses;  // this rank's, per step
  std::vector<double> norms;   // the global gradient norm clipping saw, per step
  torch::Tensor weights;
  std::int64_t state_bytes = 0;
  std::size_t buckets = 0;
  int allreduces = 0, allgathers = 0, reduce_scatters = 0;
};

// `steps` AdamW steps (two groups, weight decay, clipped at a norm the
// gradients exceed) through DdpReducer::optimizer_step, as the trainer takes them.
TrainResult train(comm::Communicator& world, int zero, bool bf16, int steps) {
  auto model = tiny_model();
  config::OptimizerConfig oc;
  oc.lr = 1e-2;
  oc.weight_decay = 0.1;
  auto optimizer = optim::make_optimizer(*model, oc);
  config::ParallelConfig p;
  p.first_bucket_mb = 0.0025;
  p.bucket_cap_mb = 0.01;
  p.zero = zero;
  p.bf16_compression = bf16;
  CountingCommunicator counted(world);
  TrainResult run;
  {
    DdpReducer ddp(p, *model, *optimizer, counted, world);
    run.buckets = ddp.bucket_count();
    run.state_bytes = ddp.optimizer_state_bytes();
    counted.allreduces = counted.allgathers = counted.reduce_scatters = 0;  // after the start-up broadcast
    for (int s = 0; s < steps; ++s) {
      ddp.begin_step();
      ddp.micro_step(true);
      const auto [x, y] = batch(world.rank(), s);
      const torch::Tensor loss = model::language_model_loss(model->forward(x), y);
      run.losses.push_back(loss.item<double>());
      (loss / world.size()).backward();
      ddp.end_backward();
      run.norms.push_back(ddp.optimizer_step(oc.lr, kMaxNorm).norm);
    }
  }
  run.allreduces = counted.allreduces;
  run.allgathers = counted.allgathers;
  run.reduce_scatters = counted.reduce_scatters;
  run.weights = flatten_parameters(*model);
  return run;
}

class ZeroTest : public ::testing::Test {
 protected:
  comm::MpiCommunicator comm{MPI_COMM_WORLD, std::chrono::seconds(120)};
};

TEST_F(ZeroTest, Zero1TrainsAsDdpWithOneNthOfTheOptimizerState) {
  constexpr int kSteps = 20;
  const TrainResult ddp = train(comm, 0, false, kSteps);
  const TrainResult zero = train(comm, 1, false, kSteps);
  ASSERT_GT(ddp.buckets, 2U) << "the test wants several buckets";
  // The same losses and global gradient norms to fp32 rounding (the sums run
  // in another order), with clipping active in most steps.
  int clipped = 0;
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_NEAR(zero.losses[s], ddp.losses[s], 1e-6 * std::abs(ddp.losses[s])) << "step " << s + 1;
    EXPECT_NEAR(zero.norms[s], ddp.norms[s], 1e-6 * ddp.norms[s]) << "step " << s + 1;
    clipped += ddp.norms[s] > kMaxNorm ? 1 : 0;
  }
  EXPECT_GE(clipped, kSteps / 2);
  // The weights to 1e-4: the clipping factors differ in their last bits (the
  // norm is summed in another order), and AdamW's division by sqrt(v) magnifies
  // that in elements whose gradients are near zero. (Without clipping, 1e-6.)
  EXPECT_LE(((zero.weights - ddp.weights).norm() / ddp.weights.norm()).item<double>(), 1e-4);
  // 1/N of the moments, give or take each bucket's padding (fewer than N elements).
  const std::int64_t n = comm.size();
  EXPECT_GE(zero.state_bytes * n, ddp.state_bytes);
  EXPECT_LE(zero.state_bytes * n, ddp.state_bytes + std::int64_t{8} * n * static_cast<std::int64_t>(zero.buckets));
  // DDP allreduced every bucket; ZeRO-1 reduce-scattered them, then allgathered the weights.
  EXPECT_EQ(ddp.allreduces, static_cast<int>(ddp.buckets) * kSteps);
  EXPECT_EQ(ddp.reduce_scatters, 0);
  EXPECT_EQ(zero.allreduces, 0);
  EXPECT_EQ(zero.reduce_scatters, static_cast<int>(zero.buckets) * kSteps);
  EXPECT_EQ(zero.allgathers, static_cast<int>(zero.buckets) * kSteps);
}

TEST_F(ZeroTest, Zero1IsBitwiseDeterministicAndKeepsReplicasIdentical) {
  for (const bool bf16 : {false, true}) {
    const TrainResult first = train(comm, 1, bf16, 6);
    const TrainResult second = train(comm, 1, bf16, 6);
    EXPECT_TRUE(torch::equal(first.weights, second.weights)) << "bf16 " << bf16;
    std::vector<float> all(static_cast<std::size_t>(first.weights.numel() * comm.size()));
    comm.allgather(first.weights.data_ptr(), all.data(), static_cast<std::size_t>(first.weights.numel()),
                   comm::DType::kFloat32);
    for (int r = 1; r < comm.size(); ++r) {
      EXPECT_TRUE(std::equal(all.begin(), all.begin() + first.weights.numel(), all.begin() + r * first.weights.numel()))
          << "rank " << r << ", bf16 " << bf16;
    }
  }
}

}  // namespace
}  // namespace hpctrain::reduce
