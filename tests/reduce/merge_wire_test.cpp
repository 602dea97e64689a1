// DDAP's quantized merge wires (reduce/encoded_mean_wire.h, reduce/value_codec.h), int8, int4
// and int2, across ranks: the merged update against a reference built from every
// rank's values by the rule the header states, the residual it leaves, the
// bytes it sends against fp32's, and DDAP with it deterministic, its error
// feedback part of the state a checkpoint keeps.
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>

#include "comm/mpi_communicator.h"
#include "ddap_run.h"
#include "optim/optimizer.h"
#include "reduce/ddap_reducer.h"
#include "reduce/encoded_mean_wire.h"
#include "reduce/flat_parameters.h"
#include "reduce/value_codec.h"
#include "tiny_model.h"

namespace hpctrain::reduce {
namespace {

class MergeWireTest : public ::testing::Test {
 protected:
  comm::MpiCommunicator comm{MPI_COMM_WORLD, std::chrono::seconds(120)};
};

// Values of very different sizes per block, as a replica's update has them.
torch::Tensor values_of(int rank, std::int64_t n) {
  torch::manual_seed(77 + rank);
  return torch::randn({n}) * torch::pow(10.0, torch::randint(-6, 0, {n}).to(torch::kFloat32));
}

TEST_F(MergeWireTest, RoundTripIsWithinHalfAStepOfItsBlock) {
  for (const int bits : {8, 4, 2}) {
    const int largest = (1 << (bits - 1)) - 1;
    at::Tensor x = values_of(comm.rank(), 40 * kQuantBlock);
    x.narrow(0, 3 * kQuantBlock, kQuantBlock).zero_();  // a block of zeros stays zeros
    const QuantizedBlocks q = quantize_blocks(x, bits);
    const at::Tensor back = dequantize_blocks(q);
    const at::Tensor step = q.scales.repeat_interleave(kQuantBlock);
    EXPECT_TRUE(((back - x).abs() <= step * 0.5 * (1 + 1e-6)).all().item<bool>()) << bits;
    EXPECT_TRUE(back.narrow(0, 3 * kQuantBlock, kQuantBlock).eq(0).all().item<bool>()) << bits;
    EXPECT_EQ(q.values.scalar_type(), torch::kInt8);
    EXPECT_EQ(q.values.abs().max().item<int>(), largest);  // each block's largest value uses the whole range
  }
}

// M, the residual and the bytes for `bits`; returns the bytes sent.
std::uint64_t check_mean(comm::Communicator& comm, int bits) {
  const int w = comm.size();
  constexpr std::int64_t n = 1000;  // not whole blocks, nor whole chunks
  const at::Tensor mine = values_of(comm.rank(), n);
  const EncodedMeanWire wire(w, make_value_codec(bits == 8   ? config::WireCodec::kInt8
                                                 : bits == 4 ? config::WireCodec::kInt4
                                                             : config::WireCodec::kInt2));
  const MergeWire::Outgoing out = wire.encode(mine);
  comm::MpiCommunicator wire_comm(MPI_COMM_WORLD, std::chrono::seconds(120));
  const at::Tensor merged = wire.merge(out.payload, n, wire_comm);

  // The reference: every rank's fp32 values, each quantized as a whole
  // (chunks are whole blocks), summed in rank order, divided, quantized again.
  at::Tensor all = torch::empty({w, n});
  comm.allgather(mine.data_ptr(), all.data_ptr(), n, comm::DType::kFloat32);
  const std::int64_t padded = (n + w * kQuantBlock - 1) / (w * kQuantBlock) * w * kQuantBlock;
  at::Tensor sum = torch::zeros({padded});
  for (int r = 0; r < w; ++r) {
    at::Tensor x = torch::zeros({padded});
    x.narrow(0, 0, n).copy_(all[r]);
    sum += dequantize_blocks(quantize_blocks(x, bits));
  }
  const at::Tensor reference = dequantize_blocks(quantize_blocks(sum / static_cast<double>(w), bits)).narrow(0, 0, n);
  EXPECT_TRUE(torch::equal(merged, reference)) << bits;

  // Close to the exact mean, and this rank's residual is what its rounding left out.
  const at::Tensor exact = all.mean(0);
  EXPECT_LE(((merged - exact).norm() / exact.norm()).item<double>(), bits == 8 ? 0.02 : bits == 4 ? 0.3 : 1.0) << bits;
  at::Tensor x = torch::zeros({padded});
  x.narrow(0, 0, n).copy_(mine);
  EXPECT_TRUE(torch::equal(out.residual, mine - dequantize_blocks(quantize_blocks(x, bits)).narrow(0, 0, n)));

  // The bytes: an alltoall and an allgather of (W - 1) chunks of n / W
  // values at `bits` each and their scales.
  const auto chunk = static_cast<std::uint64_t>(padded / w);
  EXPECT_EQ(wire_comm.bytes_sent(), 2 * static_cast<std::uint64_t>(w - 1) *
                                        (chunk * static_cast<std::uint64_t>(bits) / 8 + chunk / kQuantBlock * 4))
      << bits;
  return wire_comm.bytes_sent();
}

TEST_F(MergeWireTest, MeanIsTheRuleAppliedToEveryRanksValues) {
  const std::uint64_t int8 = check_mean(comm, 8);
  const std::uint64_t int4 = check_mean(comm, 4);
  const std::uint64_t int2 = check_mean(comm, 2);
  // Against fp32's allreduce of 4n: 3.9x, 7.5x and 14.2x fewer for whole
  // chunks, a little less here (1000 values padded to whole chunks).
  if (comm.size() == 2) {
    comm::MpiCommunicator fp32(MPI_COMM_WORLD, std::chrono::seconds(120));
    at::Tensor v = values_of(comm.rank(), 1000);
    fp32.allreduce(v.data_ptr(), 1000, comm::DType::kFloat32, comm::ReduceOp::kAverage);
    EXPECT_GE(static_cast<double>(fp32.bytes_sent()) / static_cast<double>(int8), 3.75);
    EXPECT_GE(static_cast<double>(fp32.bytes_sent()) / static_cast<double>(int4), 7.0);
    EXPECT_GE(static_cast<double>(fp32.bytes_sent()) / static_cast<double>(int2), 13.0);
  }
}

// The bf16 codec through the same collective: every rank's values rounded to
// bf16 (nearest even, as LibTorch casts), summed in rank order in fp32,
// divided, rounded again; the residual is what this rank's rounding left
// out; half of fp32's bytes.
TEST_F(MergeWireTest, Bf16MeanIsTheRoundedMeanOfTheRoundedValues) {
  const int w = comm.size();
  constexpr std::int64_t n = 1001;  // not whole chunks
  const at::Tensor mine = values_of(comm.rank(), n);
  const EncodedMeanWire wire(w, make_value_codec(config::WireCodec::kBf16));
  EXPECT_EQ(wire.describe(), "bf16 (error feedback)");
  const MergeWire::Outgoing out = wire.encode(mine);
  comm::MpiCommunicator wire_comm(MPI_COMM_WORLD, std::chrono::seconds(120));
  const at::Tensor merged = wire.merge(out.payload, n, wire_comm);
  const auto round = [](const at::Tensor& x) { return x.to(torch::kBFloat16).to(torch::kFloat32); };
  at::Tensor all = torch::empty({w, n});
  comm.allgather(mine.data_ptr(), all.data_ptr(), n, comm::DType::kFloat32);
  at::Tensor sum = torch::zeros({n});
  for (int r = 0; r < w; ++r) sum += round(all[r]);
  EXPECT_TRUE(torch::equal(merged, round(sum / static_cast<double>(w))));
  EXPECT_TRUE(torch::equal(out.residual, mine - round(mine)));
  const auto chunk = static_cast<std::uint64_t>((n + w - 1) / w);
  EXPECT_EQ(wire_comm.bytes_sent(), 2 * static_cast<std::uint64_t>(w - 1) * chunk * 2);
}

config::ParallelConfig quantized_diloco(config::WireCodec wire) {
  config::ParallelConfig p;
  p.reducer = config::ReducerKind::kDdap;
  p.merge_every = 3;
  p.merge = config::MergeKind::kDiloco;
  p.merge_wire = wire;
  return p;
}

// Ten steps at once, and the same ten stopped after the merge of step 6 and
// continued by a new reducer from the state a checkpoint keeps: bitwise
// equal, and not without the residuals (what the test would miss if the
// checkpoint dropped them).
TEST_F(MergeWireTest, QuantizedDdapRepeatsAndItsResidualsAreCheckpointState) {
  comm::MpiCommunicator merges(MPI_COMM_WORLD, std::chrono::seconds(120));
  for (const auto wire : {config::WireCodec::kInt8, config::WireCodec::kInt4, config::WireCodec::kInt2}) {
    SCOPED_TRACE(config::name_of(wire));
    const config::ParallelConfig p = quantized_diloco(wire);
    const at::Tensor first = ddap_run(p, merges, comm, 10);
    EXPECT_TRUE(torch::equal(first, ddap_run(p, merges, comm, 10)));

    // Stopped after step 6's merge (blocking: every replica is the anchor).
    const auto resumed = [&](bool keep_residual) {
      return ddap_run(p, merges, comm, 10, 6, [&](model::LanguageModel& /*model*/, DdapState& state) {
        EXPECT_TRUE(state.residual.defined());
        EXPECT_GT(state.residual.abs().max().item<float>(), 0.0F);
        if (!keep_residual) state.residual = at::Tensor();
      });
    };
    EXPECT_TRUE(torch::equal(first, resumed(true)));
    EXPECT_FALSE(torch::equal(first, resumed(false)));
  }
}

// The synchronous steps' gradients through the quantized wire (sync_wire):
// the replicas stay one model, bit for bit; ten steps repeat, and equal a run
// stopped inside the synchronous steps and continued from the state a
// checkpoint keeps, but not when that state drops the residuals; the
// residual is gone once the synchronous steps end.
TEST_F(MergeWireTest, QuantizedSyncStepsKeepOneModelAndTheirResidualsAreCheckpointState) {
  comm::MpiCommunicator merges(MPI_COMM_WORLD, std::chrono::seconds(120));
  for (const auto wire : {config::WireCodec::kInt8, config::WireCodec::kInt4, config::WireCodec::kInt2}) {
    SCOPED_TRACE(config::name_of(wire));
    config::ParallelConfig p = quantized_diloco(config::WireCodec::kFp32);
    p.sync_steps = 8;
    p.sync_wire = wire;
    const at::Tensor first = ddap_run(p, merges, comm, 10);
    EXPECT_TRUE(torch::equal(first, ddap_run(p, merges, comm, 10)));
    // After the last synchronous step: one model, bit for bit, and no residual.
    const at::Tensor through_8 = ddap_run(p, merges, comm, 10, 8, [&](model::LanguageModel& model, DdapState& state) {
      const at::Tensor mine = flatten_parameters(model);
      at::Tensor all = torch::empty({comm.size(), mine.numel()});
      comm.allgather(mine.data_ptr(), all.data_ptr(), static_cast<std::size_t>(mine.numel()), comm::DType::kFloat32);
      for (int r = 1; r < comm.size(); ++r) EXPECT_TRUE(torch::equal(all[r], all[0])) << "rank " << r;
      EXPECT_FALSE(state.sync_residual.defined());
    });
    EXPECT_TRUE(torch::equal(first, through_8));

    const auto resumed = [&](bool keep_residual) {
      return ddap_run(p, merges, comm, 10, 5, [&](model::LanguageModel& /*model*/, DdapState& state) {
        EXPECT_TRUE(state.sync_residual.defined());
        EXPECT_GT(state.sync_residual.abs().max().item<float>(), 0.0F);
        if (!keep_residual) state.sync_residual = at::Tensor();
      });
    };
    EXPECT_TRUE(torch::equal(first, resumed(true)));
    EXPECT_FALSE(torch::equal(first, resumed(false)));
  }
}

}  // namespace
}  // namespace hpctrain::reduce
