// Today's checkpoint-reader names (ckpt_file/) over the code before the
// hostile-input fixes, where the reader lived in ckpt/ beside LibTorch: used
// only when bench/fuzz-before-fixes.sh builds the checkpoint harness against
// that code. Verification ran in the caller's process then.
#pragma once

#include "ckpt/checkpoint.h"
#include "ckpt/hdf5_file.h"
#include "ckpt/verify.h"
#include "handles/hdf5.h"

namespace hpctrain::ckpt_file {

using ckpt::CheckpointError;
using ckpt::CheckpointInfo;
using ckpt::read_checkpoint_info;
using ckpt::Verdict;

// The old reader returned tensors from tensor(); today's is read().
class Hdf5Reader : public ckpt::Hdf5Reader {
 public:
  using ckpt::Hdf5Reader::Hdf5Reader;
  [[nodiscard]] at::Tensor read(const std::string& dataset) const { return tensor(dataset); }
};

inline Verdict verify_checkpoint_in_process(const std::filesystem::path& path) { return ckpt::verify_checkpoint(path); }

}  // namespace hpctrain::ckpt_file
