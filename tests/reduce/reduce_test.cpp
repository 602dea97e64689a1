// DDP and DDAP across ranks: the properties the reducers promise.
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "comm/mpi_communicator.h"
#include "optim/optimizer.h"
#include "reduce/ddap_reducer.h"
#include "reduce/ddp_reducer.h"
#include "reduce/flat_parameters.h"
#include "reduce/model_merge.h"
#include "reduce/replica_check.h"
#include "tiny_model.h"

namespace hpctrain::reduce {
namespace {

class ReducerTest : public ::testing::Test {
 protected:
  comm::MpiCommunicator comm{MPI_COMM_WORLD, std::chrono::seconds(120)};
};

config::ParallelConfig ddp_config(bool overlap, double bucket_cap_mb = 0.01) {
  config::ParallelConfig p;
  p.first_bucket_mb = bucket_cap_mb / 4;
  p.bucket_cap_mb = bucket_cap_mb;
  p.overlap = overlap;
  return p;
}

config::ParallelConfig ddap_config(std::int64_t every, config::MergeKind merge, bool overlapped, std::int64_t delay,
                                   bool merge_moments = false) {
  config::ParallelConfig p;
  p.reducer = config::ReducerKind::kDdap;
  p.merge_every = every;
  p.merge = merge;
  p.merge_mode = overlapped ? config::MergeMode::kOverlapped : config::MergeMode::kBlocking;
  p.merge_delay = delay;
  p.merge_moments = merge_moments;
  p.outer_lr = 0.7;
  p.outer_momentum = 0.9;
  return p;
}

// Trains `steps` SGD or AdamW steps under DDP; returns the flat weights.
torch::Tensor train_ddp(comm::Communicator& comm, bool overlap, int steps, int micro_steps = 1,
                        double bucket_cap_mb = 0.01) {
  auto model = tiny_model();
  optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  DdpReducer ddp(ddp_config(overlap, bucket_cap_mb), *model, optimizer, comm, comm);
  EXPECT_GT(ddp.bucket_count(), 2U) << "the test wants several buckets";
  for (int s = 0; s < steps; ++s) {
    ddp.begin_step();
    for (int m = 0; m < micro_steps; ++m) {
      ddp.micro_step(m + 1 == micro_steps);
      const auto [x, y] = batch(comm.rank(), s * micro_steps + m);
      (model::language_model_loss(model->forward(x), y) / (micro_steps * comm.size())).backward();
    }
    ddp.end_backward();
    optimizer.step();
  }
  // Overlap means the hooks hand every bucket over during backward, once per
  // step (never during the no_sync micro-steps); without overlap, none.
  EXPECT_EQ(ddp.buckets_launched_during_backward(), overlap ? ddp.bucket_count() * steps : 0U);
  return flatten_parameters(*model);
}

// A checkpoint's snapshot is written while training goes on (in the
// background for one-file checkpoints): it must hold copies, never the live
// weights or AdamW moments that the next optimizer step changes in place.
// One-file (rank 0 holds the snapshot) and sharded (every rank its part), DDP
// and DDAP.
TEST_F(ReducerTest, SnapshotsDoNotChangeWhenTrainingGoesOn) {
  for (const bool ddap : {false, true}) {
    for (const bool sharded : {false, true}) {
      auto model = tiny_model();
      optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
      std::unique_ptr<Reducer> reducer;
      if (ddap) {
        reducer = std::make_unique<DdapReducer>(ddap_config(2, config::MergeKind::kAverage, false, 1), *model,
                                                optimizer, comm, comm);
      } else {
        reducer = std::make_unique<DdpReducer>(ddp_config(false), *model, optimizer, comm, comm);
      }
      auto step = [&](int s) {
        reducer->begin_step();
        reducer->micro_step(true);
        const auto [x, y] = batch(comm.rank(), s);
        (model::language_model_loss(model->forward(x), y) / (reducer->gradients_summed_over_ranks() ? comm.size() : 1))
            .backward();
        reducer->end_backward();
        reducer->optimizer_step(1e-2, 0.0);
        reducer->after_optimizer_step(s + 1, false);
      };
      step(0);
      ckpt::Snapshot snapshot;
      snapshot.sharded = sharded;
      reducer->save(snapshot);
      std::vector<torch::Tensor> copies;
      for (const auto& [name, t] : snapshot.tensors) copies.push_back(t.clone());
      step(1);
      const bool holds = sharded || comm.rank() == 0;
      EXPECT_EQ(!snapshot.tensors.empty(), holds) << "ddap " << ddap << ", sharded " << sharded;
      for (std::size_t i = 0; i < copies.size(); ++i) {
        EXPECT_TRUE(torch::equal(snapshot.tensors[i].second, copies[i]))
            << snapshot.tensors[i].first << " changed with the next step (ddap " << ddap << ", sharded " << sharded
            << ")";
      }
    }
  }
}

TEST_F(ReducerTest, OverlappedDdpEqualsNonOverlappedBitwise) {
  const torch::Tensor overlapped = train_ddp(comm, true, 5, 2);
  const torch::Tensor after_backward = train_ddp(comm, false, 5, 2);
  EXPECT_TRUE(torch::equal(overlapped, after_backward));
}

TEST_F(ReducerTest, DdpKeepsReplicasIdentical) {
  const torch::Tensor weights = train_ddp(comm, true, 4);
  std::vector<float> all(static_cast<std::size_t>(weights.numel() * comm.size()));
  comm.allgather(weights.data_ptr(), all.data(), static_cast<std::size_t>(weights.numel()), comm::DType::kFloat32);
  for (int r = 1; r < comm.size(); ++r) {
    ASSERT_TRUE(std::equal(all.begin(), all.begin() + weights.numel(), all.begin() + r * weights.numel()));
  }
}

TEST_F(ReducerTest, DdpEqualsOneRankWithTheWholeBatch) {
  // Every rank also computes, alone, what one rank would do with all ranks' batches.
  const torch::Tensor distributed = train_ddp(comm, true, 3);
  auto model = tiny_model();
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  for (int s = 0; s < 3; ++s) {
    optimizer.zero_grad();
    for (int r = 0; r < comm.size(); ++r) {
      const auto [x, y] = batch(r, s);
      (model::language_model_loss(model->forward(x), y) / comm.size()).backward();
    }
    optimizer.step();
  }
  const torch::Tensor single = flatten_parameters(*model);
  // fp32 tolerance: the sums differ in order only, but AdamW's division by
  // sqrt(v) magnifies last-bit differences in gradients near zero.
  EXPECT_LE(((distributed - single).norm() / single.norm()).item<double>(), 1e-5);
}

TEST_F(ReducerTest, TiesMatchesTheElementwiseRule) {
  torch::manual_seed(77 + comm.rank());
  // Small integers make signs, ties and zeros common.
  const torch::Tensor delta = torch::randint(-2, 3, {257}).to(torch::kFloat32);
  const torch::Tensor merged = merged_delta(delta, {config::MergeKind::kTies, 0.7, 0.9}, comm);
  std::vector<float> all(257 * static_cast<std::size_t>(comm.size()));
  comm.allgather(delta.data_ptr(), all.data(), 257, comm::DType::kFloat32);
  for (std::size_t e = 0; e < 257; ++e) {
    float total = 0;
    for (int r = 0; r < comm.size(); ++r) total += all[static_cast<std::size_t>(r) * 257 + e];
    const float sign = total > 0 ? 1.0F : (total < 0 ? -1.0F : 0.0F);
    float sum = 0;
    int count = 0;
    for (int r = 0; r < comm.size(); ++r) {
      const float d = all[static_cast<std::size_t>(r) * 257 + e];
      if (d != 0 && (d > 0 ? 1.0F : -1.0F) == sign) {
        sum += d;
        ++count;
      }
    }
    const float expected = count > 0 ? sum / static_cast<float>(count) : 0.0F;
    ASSERT_FLOAT_EQ(merged[static_cast<std::int64_t>(e)].item<float>(), expected) << "element " << e;
  }
}

TEST_F(ReducerTest, MergeMomentsAveragesThemAndKeepsLocalProgress) {
  const int n = comm.size();
  const double r = comm.rank();
  auto model = tiny_model(config::ModelKind::kMlp);
  optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  // Rank-dependent AdamW state: first moments r + 1, second moments 2 (r + 1).
  auto set_moments = [&] {
    optim::AdamState s;
    for (const auto& p : model->parameters()) {
      s.exp_avg.push_back(torch::full_like(p, r + 1));
      s.exp_avg_sq.push_back(torch::full_like(p, 2 * (r + 1)));
      s.steps.push_back(1);
    }
    optim::restore_adam_state(optimizer, *model, s);
  };
  auto first = [&](std::size_t i) { return optim::adam_state(optimizer, *model).exp_avg[i]; };
  auto second = [&](std::size_t i) { return optim::adam_state(optimizer, *model).exp_avg_sq[i]; };
  const auto shape = model->parameters()[0].sizes();
  const double mean = (n + 1) / 2.0;  // of r + 1 over the ranks
  set_moments();
  {
    DdapReducer blocking(ddap_config(1, config::MergeKind::kAverage, false, 0, true), *model, optimizer, comm, comm);
    blocking.after_optimizer_step(1, false);
    EXPECT_TRUE(torch::equal(first(0), torch::full(shape, mean)));
    EXPECT_TRUE(torch::equal(second(1), torch::full(model->parameters()[1].sizes(), 2 * mean)));
  }
  set_moments();
  DdapReducer overlapped(ddap_config(2, config::MergeKind::kAverage, true, 1, true), *model, optimizer, comm, comm);
  overlapped.after_optimizer_step(1, false);
  overlapped.after_optimizer_step(2, false);  // starts a merge from the moments as they are now
  first(0).add_(10);                          // local progress while it is in flight
  second(0).zero_();                          // a fall below this rank's value at the start
  overlapped.after_optimizer_step(3, false);  // applies it: mean + (now - start), second moments >= 0
  EXPECT_TRUE(torch::equal(first(0), torch::full(shape, mean + 10)));
  EXPECT_TRUE(torch::equal(first(1), torch::full(model->parameters()[1].sizes(), mean)));
  EXPECT_TRUE(torch::equal(second(0), torch::full(shape, std::max(0.0, 2 * mean - 2 * (r + 1)))));
}

TEST_F(ReducerTest, AverageEveryStepUnderSgdEqualsDdp) {
  // DDP with plain SGD...
  auto ddp_model = tiny_model(config::ModelKind::kMlp);
  {
    optim::AdamW unused(ddp_model->parameters(), torch::optim::AdamWOptions(1e-2));  // the reducer's checkpoints
    DdpReducer ddp(config::ParallelConfig{}, *ddp_model, unused, comm, comm);
    torch::optim::SGD sgd(ddp_model->parameters(), torch::optim::SGDOptions(0.1));
    for (int s = 0; s < 4; ++s) {
      ddp.begin_step();
      const auto [x, y] = batch(comm.rank(), s);
      (model::language_model_loss(ddp_model->forward(x), y) / comm.size()).backward();
      ddp.end_backward();
      sgd.step();
    }
  }
  // ...against local SGD steps averaged after every step (DDAP, H = 1).
  auto local = tiny_model(config::ModelKind::kMlp);
  comm::MpiCommunicator merge_comm(MPI_COMM_WORLD, std::chrono::seconds(120));
  optim::AdamW unused(local->parameters(), torch::optim::AdamWOptions(1e-2));
  DdapReducer ddap(ddap_config(1, config::MergeKind::kAverage, false, 0), *local, unused, merge_comm, comm);
  torch::optim::SGD sgd(local->parameters(), torch::optim::SGDOptions(0.1));
  for (int s = 0; s < 4; ++s) {
    sgd.zero_grad();
    const auto [x, y] = batch(comm.rank(), s);
    model::language_model_loss(local->forward(x), y).backward();
    sgd.step();
    ddap.after_optimizer_step(s + 1, false);
  }
  const torch::Tensor a = flatten_parameters(*ddp_model);
  const torch::Tensor b = flatten_parameters(*local);
  EXPECT_LE(((a - b).norm() / a.norm()).item<double>(), 1e-6);
}

torch::Tensor train_ddap(comm::Communicator& comm, config::MergeKind rule, bool overlapped) {
  auto model = tiny_model();
  comm::MpiCommunicator merge_comm(MPI_COMM_WORLD, std::chrono::seconds(120));
  optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  DdapReducer ddap(ddap_config(3, rule, overlapped, 1), *model, optimizer, merge_comm, comm);
  for (int s = 0; s < 10; ++s) {
    optimizer.zero_grad();
    const auto [x, y] = batch(comm.rank(), s);
    model::language_model_loss(model->forward(x), y).backward();
    optimizer.step();
    ddap.after_optimizer_step(s + 1, false);
  }
  ddap.finish();
  EXPECT_EQ(ddap.merges(), 4);  // steps 3, 6, 9 and the final one
  return flatten_parameters(*model);
}

TEST_F(ReducerTest, OverlappedDdapIsDeterministicAndEndsWithIdenticalReplicas) {
  for (const auto rule : {config::MergeKind::kAverage, config::MergeKind::kTies, config::MergeKind::kDiloco}) {
    const torch::Tensor first = train_ddap(comm, rule, true);
    const torch::Tensor second = train_ddap(comm, rule, true);
    EXPECT_TRUE(torch::equal(first, second)) << config::name_of(rule);
    std::vector<float> all(static_cast<std::size_t>(first.numel() * comm.size()));
    comm.allgather(first.data_ptr(), all.data(), static_cast<std::size_t>(first.numel()), comm::DType::kFloat32);
    for (int r = 1; r < comm.size(); ++r) {
      EXPECT_TRUE(std::equal(all.begin(), all.begin() + first.numel(), all.begin() + r * first.numel()))
          << config::name_of(rule);
    }
  }
}

// DDAP's synchronous start (parallel.sync_steps) trains as DDP does: the first
// N steps sum the gradients over the ranks before AdamW's step, the anchor
// follows the one model; then the local steps begin, and the merges fall
// every H steps counted from the switch.
TEST_F(ReducerTest, SyncStepsTrainAsDdpThenMergeEveryHFromTheSwitch) {
  constexpr int kSync = 4;
  const torch::Tensor ddp = train_ddp(comm, false, kSync);
  auto model = tiny_model();
  comm::MpiCommunicator merge_comm(MPI_COMM_WORLD, std::chrono::seconds(120));
  optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  config::ParallelConfig p = ddap_config(3, config::MergeKind::kAverage, false, 0);
  p.sync_steps = kSync;
  DdapReducer ddap(p, *model, optimizer, merge_comm, comm);
  for (int s = 0; s < 10; ++s) {
    ddap.begin_step();
    const bool summed = ddap.gradients_summed_over_ranks();
    EXPECT_EQ(summed, s < kSync) << "step " << s + 1;
    const auto [x, y] = batch(comm.rank(), s);
    (model::language_model_loss(model->forward(x), y) / (summed ? comm.size() : 1)).backward();
    ddap.end_backward();
    optimizer.step();
    ddap.after_optimizer_step(s + 1, false);
    if (s + 1 == kSync) {
      const torch::Tensor weights = flatten_parameters(*model);
      // Two ranks sum each element as DDP's buckets do (a + b): bitwise.
      // More may add in another order.
      if (comm.size() == 2) {
        EXPECT_TRUE(torch::equal(weights, ddp));
      } else {
        EXPECT_LE(((weights - ddp).norm() / ddp.norm()).item<double>(), 1e-6);
      }
      EXPECT_TRUE(torch::equal(ddap.evaluation_weights(), weights));  // the anchor is the model
      EXPECT_EQ(ddap.merges(), 0);
    }
  }
  EXPECT_EQ(ddap.merges(), 2);  // steps 7 and 10: H = 3 from step 4
}

TEST_F(ReducerTest, DivergenceCheckNamesTheFirstDifferingParameter) {
  auto model = tiny_model();
  EXPECT_NO_THROW(check_replicas(*model, comm, 1));
  if (comm.rank() == comm.size() - 1) {
    torch::NoGradGuard no_grad;
    model->named_parameters()["blocks.1.mlp.fc.weight"].view({-1})[5].add_(1e-3);
  }
  try {
    check_replicas(*model, comm, 7);
    FAIL() << "no divergence reported";
  } catch (const ReplicaDivergence& e) {
    EXPECT_NE(std::string(e.what()).find("replicas diverged at step 7: parameter blocks.1.mlp.fc.weight differs from "
                                         "rank 0's on rank " +
                                         std::to_string(comm.size() - 1)),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace hpctrain::reduce
