// Streaming DDAP (parallel.merge_fragments, reduce/merge_fragments.h): where
// the fragments are cut and when each merges, against the rule the header
// states worked out by hand; a fragment's merge against the mean of every
// rank's replica gathered over plain MPI, touching nothing outside the
// fragment; and a run stopped with a fragment's merge in flight, continued
// from the state a checkpoint keeps, bitwise equal to the run straight
// through.
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>

#include "comm/mpi_communicator.h"
#include "ddap_run.h"
#include "optim/optimizer.h"
#include "reduce/ddap_reducer.h"
#include "reduce/flat_parameters.h"
#include "reduce/merge_fragments.h"
#include "tiny_model.h"

namespace hpctrain::reduce {
namespace {

TEST(MergeFragmentsTest, CutsAtTheParameterBoundaryNearestToEachShare) {
  // Boundaries 0 10 110 120 130 140 150: half of 150 is 75, nearest 110; a
  // third, 50, is nearest 10 (40 away, against 60), two thirds, 100, 110.
  const std::vector<std::int64_t> sizes = {10, 100, 10, 10, 10, 10};
  EXPECT_EQ(MergeFragments(sizes, 1, 4).ranges(), (std::vector<FlatRange>{{0, 150}}));
  EXPECT_EQ(MergeFragments(sizes, 2, 4).ranges(), (std::vector<FlatRange>{{0, 110}, {110, 150}}));
  EXPECT_EQ(MergeFragments(sizes, 3, 6).ranges(), (std::vector<FlatRange>{{0, 10}, {10, 110}, {110, 150}}));
  // Every fragment keeps at least one parameter, however uneven the sizes.
  EXPECT_EQ(MergeFragments({1000, 1, 1}, 3, 3).ranges(),
            (std::vector<FlatRange>{{0, 1000}, {1000, 1001}, {1001, 1002}}));
  EXPECT_THROW(MergeFragments(sizes, 7, 16), std::invalid_argument);  // more fragments than parameters
  EXPECT_THROW(MergeFragments(sizes, 4, 3), std::invalid_argument);   // two fragments on one step
}

TEST(MergeFragmentsTest, EachFragmentMergesEveryHStepsStaggered) {
  // H = 16, P = 4: fragments 0..3 at local steps 4, 8, 12, 16, then 20, ...
  const MergeFragments four(std::vector<std::int64_t>(8, 5), 4, 16);
  const auto& r = four.ranges();
  for (std::int64_t u = 1; u <= 40; ++u) {
    const std::optional<FlatRange> due = four.due(u);
    if (u % 4 != 0) {
      EXPECT_FALSE(due.has_value()) << u;
    } else {
      ASSERT_TRUE(due.has_value()) << u;
      EXPECT_EQ(*due, r[static_cast<std::size_t>(((u / 4) + 3) % 4)]) << u;
    }
  }
  EXPECT_FALSE(four.due(0).has_value());
  // H = 10, P = 3: ⌊10/3⌋ = 3, ⌊20/3⌋ = 6, 10 mod 10 = 0.
  const MergeFragments three(std::vector<std::int64_t>(3, 7), 3, 10);
  for (std::int64_t u = 1; u <= 20; ++u) {
    const std::optional<FlatRange> due = three.due(u);
    const int p = u % 10 == 3 ? 0 : u % 10 == 6 ? 1 : u % 10 == 0 ? 2 : -1;
    EXPECT_EQ(due.has_value(), p >= 0) << u;
    if (p >= 0 && due) {
      EXPECT_EQ(*due, three.ranges()[static_cast<std::size_t>(p)]) << u;
    }
  }
  // One fragment: every H steps, as an unfragmented run merges.
  const MergeFragments one(std::vector<std::int64_t>(3, 7), 1, 5);
  for (std::int64_t u = 1; u <= 20; ++u) EXPECT_EQ(one.due(u).has_value(), u % 5 == 0) << u;
}

class StreamingDdapTest : public ::testing::Test {
 protected:
  comm::MpiCommunicator comm{MPI_COMM_WORLD, std::chrono::seconds(120)};
  comm::MpiCommunicator merges{MPI_COMM_WORLD, std::chrono::seconds(120)};
};

config::ParallelConfig streaming(config::MergeKind rule, config::WireCodec wire, bool overlapped) {
  config::ParallelConfig p;
  p.reducer = config::ReducerKind::kDdap;
  p.merge_every = 4;
  p.merge_fragments = 2;  // fragment 0 merges at steps 2, 6, 10; fragment 1 at 4, 8
  p.merge = rule;
  p.merge_wire = wire;
  p.merge_mode = overlapped ? config::MergeMode::kOverlapped : config::MergeMode::kBlocking;
  p.merge_delay = 1;
  return p;
}

// Blocking averages: at a fragment's step the anchor moves on that fragment
// only, by the mean of the ranks' Δ there (every replica gathered over plain
// MPI before the merge), every replica becomes the anchor there, and keeps
// its own values elsewhere.
TEST_F(StreamingDdapTest, AFragmentsMergeIsTheMeanOnItsSliceAndTouchesNothingElse) {
  auto model = tiny_model();
  optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  DdapReducer ddap(streaming(config::MergeKind::kAverage, config::WireCodec::kFp32, false), *model, optimizer, merges,
                   comm);
  const MergeFragments fragments(parameter_sizes(*model), 2, 4);
  const int w = comm.size();
  for (int s = 0; s < 8; ++s) {
    const at::Tensor anchor_before = ddap.evaluation_weights();
    // The replicas after this step's optimizer step, before its merge: train
    // a copy of the step without the reducer, as the reducer will see it.
    ddap.begin_step();
    const auto [x, y] = batch(comm.rank(), s);
    model::language_model_loss(model->forward(x), y).backward();
    ddap.end_backward();
    optimizer.step();
    const at::Tensor mine = flatten_parameters(*model);
    const std::int64_t n = mine.numel();
    at::Tensor all = torch::empty({w, n});
    comm.allgather(mine.data_ptr(), all.data_ptr(), static_cast<std::size_t>(n), comm::DType::kFloat32);
    ddap.after_optimizer_step(s + 1, false);

    const at::Tensor anchor = ddap.evaluation_weights();
    const at::Tensor after = flatten_parameters(*model);
    const std::optional<FlatRange> due = fragments.due(s + 1);
    ASSERT_EQ(due.has_value(), (s + 1) % 2 == 0) << "step " << s + 1;
    const FlatRange merged = due.value_or(FlatRange{0, 0});
    for (const FlatRange& part : fragments.ranges()) {
      const auto slice = [&](const at::Tensor& t) { return t.narrow(-1, part.begin, part.size()); };
      if (part == merged) {
        const at::Tensor want = slice(anchor_before) + (slice(all) - slice(anchor_before)).sum(0) / w;
        EXPECT_TRUE(torch::allclose(slice(anchor), want, 1e-6, 1e-7)) << "step " << s + 1;
        EXPECT_TRUE(torch::equal(slice(after), slice(anchor))) << "step " << s + 1;
      } else {
        EXPECT_TRUE(torch::equal(slice(anchor), slice(anchor_before))) << "step " << s + 1;
        EXPECT_TRUE(torch::equal(slice(after), slice(mine))) << "step " << s + 1;
      }
    }
  }
  EXPECT_EQ(ddap.merges(), 4);
  ddap.finish();  // the last step merged one fragment only: the whole model merges
  EXPECT_EQ(ddap.merges(), 5);
  EXPECT_TRUE(torch::equal(flatten_parameters(*model), ddap.evaluation_weights()));
}

// DiLoCo over int4, overlapped: ten steps at once, and the same stopped at
// step 6 with fragment 0's merge in flight, continued by a new reducer from
// the state a checkpoint keeps (its replica restored, as a checkpoint's
// load does): bitwise equal.
TEST_F(StreamingDdapTest, StopAndResumeWithAFragmentInFlightIsBitwise) {
  const config::ParallelConfig p = streaming(config::MergeKind::kDiloco, config::WireCodec::kInt4, true);
  const at::Tensor first = ddap_run(p, merges, comm, 10);
  EXPECT_TRUE(torch::equal(first, ddap_run(p, merges, comm, 10)));
  const at::Tensor resumed = ddap_run(p, merges, comm, 10, 6, [](model::LanguageModel& model, DdapState& state) {
    const FlatRange fragment0 = MergeFragments(parameter_sizes(model), 2, 4).ranges()[0];
    EXPECT_EQ(state.started_at, 6);
    EXPECT_EQ(state.merging, fragment0);
    EXPECT_EQ(state.merged.numel(), fragment0.size());
    EXPECT_EQ(state.theta_at_start.numel(), fragment0.size());
  });
  EXPECT_TRUE(torch::equal(first, resumed));
}

}  // namespace
}  // namespace hpctrain::reduce
