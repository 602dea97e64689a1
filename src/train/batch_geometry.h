// How a step's global batch falls on the ranks and their micro-steps.
// training.batch_size is the global batch at every world size: rank r of W
// takes its rank_share (data/sampler.h: B / W samples, one more for the first
// B % W ranks) and splits it into as few micro-batches of at most
// training.micro_batch_size as it can, as equal as they can be (so a pinned
// micro-batch size is a memory bound, never a divisibility rule). With the
// even shapes that once were required (B = W x micro x steps) this is the
// same split as before, bit for bit.
//
// A rank whose share is empty (fewer samples than ranks) runs one stand-in
// sample with weight 0: its backward still joins DDP's gradient sum, adding
// nothing. DDAP trains a replica per rank, which needs samples of its own, so
// it refuses that shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "config/experiment.h"

namespace hpctrain::train {

struct BatchGeometry {
  std::uint64_t global = 0;        // samples per optimizer step, all ranks together
  std::uint64_t local = 0;         // this rank's samples (0: it stands in)
  std::vector<std::size_t> micro;  // this rank's micro-batch sizes, in order
  std::size_t micro_bound = 0;     // training.micro_batch_size
  int world = 1;

  [[nodiscard]] bool stands_in() const { return local == 0; }
  // The divisor of micro-batch m's mean loss, so that the gradients become
  // the mean over the global batch (summed over ranks) or over this rank's
  // share (not summed). A whole number wherever the batch divides evenly.
  [[nodiscard]] double loss_divisor(std::size_t m, bool summed_over_ranks) const;
  // The weight of this rank's mean loss in the mean over the global batch,
  // relative to the plain mean of the ranks' losses (exactly 1 for even shares).
  [[nodiscard]] double loss_weight() const;
  // For the log: "16 samples, 6 or 5 per rank, micro-batches of up to 8: 1 micro-step".
  [[nodiscard]] std::string describe() const;
};

// Throws naming training.batch_size, the ranks and a size that works, where
// DDAP would leave a rank without samples.
BatchGeometry batch_geometry(const config::Experiment& experiment, int rank, int world);

}  // namespace hpctrain::train
