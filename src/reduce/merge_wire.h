// What goes on the wire for a DDAP merge (parallel.merge_wire), kept apart
// from the reducer that decides when a merge happens (ddap_reducer.h), as
// gradient_wire.h is for DDP. A wire turns this rank's outer gradient (its
// replica's change since the anchor, plus what the last merge left unsent)
// into what it sends, and the ranks' sends into the merged update M:
//
//   fp32  the values themselves; M by the merge rule (model_merge.h), every
//         rule; nothing is left unsent.
//   bf16, int8, int4, int2: the codec's encoding (value_codec.h) of the
//         mean of the ranks' values (encoded_mean_wire.h): 2x, 3.9x, 7.5x
//         and 14x fewer bytes than fp32. What the rounding leaves out is
//         this rank's residual, added to its next merge's values (error
//         feedback), so no part of an update is lost, only delayed (but for
//         the last merge's). The mean rules only (average, diloco).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "config/parallel_config.h"
#include "reduce/model_merge.h"

namespace hpctrain::reduce {

class MergeWire {
 public:
  virtual ~MergeWire() = default;
  MergeWire(const MergeWire&) = delete;
  MergeWire& operator=(const MergeWire&) = delete;

  // What this rank sends for `values` (fp32, flat), and its residual:
  // `values` minus what the others receive of them (undefined: none).
  struct Outgoing {
    at::Tensor payload;
    at::Tensor residual;
  };
  // For the reducer's log line, e.g. "int8 (error feedback)".
  [[nodiscard]] virtual std::string describe() const = 0;
  // Local, cheap: the trainer's thread calls it when a merge starts.
  [[nodiscard]] virtual Outgoing encode(const at::Tensor& values) const = 0;
  // Collective, blocking: M for `numel` values from every rank's payload,
  // the same on every rank bit for bit. May run on a thread of its own.
  [[nodiscard]] virtual at::Tensor merge(const at::Tensor& payload, std::int64_t numel,
                                         comm::Communicator& comm) const = 0;

 protected:
  MergeWire() = default;
};

// The wire parallel.merge_wire names, for `rule` over `ranks` ranks.
std::unique_ptr<MergeWire> make_merge_wire(const config::ParallelConfig& parallel, const MergeRule& rule, int ranks);
// The wire of codec `kind` (bf16, int8, int4 or int2) over `ranks` ranks: the
// mean of the ranks' values (encoded_mean_wire.h). DDAP's merges and
// synchronous steps (parallel.sync_wire) and DDP's buckets
// (parallel.gradient_wire) send through it.
std::unique_ptr<MergeWire> make_encoded_wire(config::WireCodec kind, int ranks);

}  // namespace hpctrain::reduce
