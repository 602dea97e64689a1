// [parallel]: the reducer (DDP, ZeRO-1 or DDAP: docs/reducers.md) and its
// options, and how ranks wait on collectives (docs/bootstrap.md).
#pragma once

#include <cstdint>

#include "config/choices.h"

namespace hpctrain::config {

class SectionReader;

enum class ReducerKind { kDdp, kDdap };
enum class MergeKind { kAverage, kTies, kDiloco };
enum class MergeMode { kBlocking, kOverlapped };
// How an exchange's values travel (reduce/value_codec.h): as they are, or
// encoded with error feedback. DDP's buckets, DDAP's synchronous steps and
// DDAP's merges each choose one.
enum class WireCodec { kFp32, kBf16, kInt8, kInt4, kInt2 };
// What a rank does between two polls of a pending collective (docs/bootstrap.md).
enum class CommWait { kSpin, kYield, kSleep };

template <>
struct ChoiceTable<ReducerKind> {
  static constexpr std::array<Choice<ReducerKind>, 2> entries{
      {{"ddp", ReducerKind::kDdp}, {"ddap", ReducerKind::kDdap}}};
};
template <>
struct ChoiceTable<MergeKind> {
  static constexpr std::array<Choice<MergeKind>, 3> entries{
      {{"average", MergeKind::kAverage}, {"ties", MergeKind::kTies}, {"diloco", MergeKind::kDiloco}}};
};
template <>
struct ChoiceTable<MergeMode> {
  static constexpr std::array<Choice<MergeMode>, 2> entries{
      {{"blocking", MergeMode::kBlocking}, {"overlapped", MergeMode::kOverlapped}}};
};
template <>
struct ChoiceTable<WireCodec> {
  static constexpr std::array<Choice<WireCodec>, 5> entries{{{"fp32", WireCodec::kFp32},
                                                             {"bf16", WireCodec::kBf16},
                                                             {"int8", WireCodec::kInt8},
                                                             {"int4", WireCodec::kInt4},
                                                             {"int2", WireCodec::kInt2}}};
};
template <>
struct ChoiceTable<CommWait> {
  static constexpr std::array<Choice<CommWait>, 3> entries{
      {{"spin", CommWait::kSpin}, {"yield", CommWait::kYield}, {"sleep", CommWait::kSleep}}};
};

struct ParallelConfig {
  ReducerKind reducer = ReducerKind::kDdp;  // synchronous or asynchronous
  double collective_timeout_s = 300;
  double prepare_timeout_s = 3600;  // the other ranks' wait while rank 0 prepares the data set
  CommWait comm_wait = CommWait::kYield;
  // ddp
  double first_bucket_mb = 1;
  double bucket_cap_mb = 25;
  bool overlap = true;            // allreduce buckets during backward
  bool bf16_compression = false;  // gradients travel as bf16
  // Or bf16, int8, int4 or int2 with error feedback, through the codec and
  // collective of DDAP's wires (reduce/encoded_gradient_wire.h); not with ZeRO-1.
  WireCodec gradient_wire = WireCodec::kFp32;
  int zero = 0;                             // 1: ZeRO-1, the optimizer state sharded over the ranks
  std::int64_t check_replicas_every = 100;  // steps; 0 turns the divergence check off
  // ddap
  // Steps trained synchronously first (gradients averaged every step, as DDP
  // does) before the local steps and merges begin: post-local SGD's warm start.
  std::int64_t sync_steps = 0;
  // How those steps' gradients travel: fp32, or bf16, int8, int4 or int2 with error
  // feedback (the merge wires' quantization, reduce/encoded_mean_wire.h).
  WireCodec sync_wire = WireCodec::kFp32;
  std::int64_t merge_every = 16;  // H, counted from the end of the synchronous steps
  MergeKind merge = MergeKind::kAverage;
  MergeMode merge_mode = MergeMode::kBlocking;
  std::int64_t merge_delay = 1;  // k: steps an overlapped merge stays in flight
  bool merge_moments = false;    // merge AdamW's moments with the weights
  // Streaming: the model merges in this many fragments, one every H/P steps
  // on a staggered schedule (reduce/merge_fragments.h).
  std::int64_t merge_fragments = 1;
  // How the outer gradients travel: fp32, or bf16, int8, int4 or int2 with error feedback (reduce/merge_wire.h).
  WireCodec merge_wire = WireCodec::kFp32;
  double outer_lr = 0.7;        // diloco
  double outer_momentum = 0.9;  // diloco

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static ParallelConfig read(SectionReader section);
};

}  // namespace hpctrain::config
