// Today's checkpoint-reader names (ckpt_file/) over the code before the
// hostile-input fixes, where the reader lived in ckpt/ beside LibTorch: used
// only when tests/fuzz/fuzz-before-fixes.sh builds the checkpoint harness against
// that code. Verification ran in the caller's process then.
#pragma once

#include <string>
#include <vector>

#include "ckpt/checkpoint.h"
#include "ckpt/hdf5_file.h"
#include "ckpt/verify.h"
#include "handles/hdf5.h"

#define HPCTRAIN_FUZZ_BEFORE_FIXES 1

namespace hpctrain::ckpt_file {

using ckpt::CheckpointError;
using ckpt::CheckpointInfo;
using ckpt::read_checkpoint_info;

// The old verify never qualified its OK: no warnings.
struct Verdict : ckpt::Verdict {
  std::vector<std::string> warnings;
};

// The old reader returned tensors from tensor(); today's returns bytes from read().
class Hdf5Reader : public ckpt::Hdf5Reader {
 public:
  using ckpt::Hdf5Reader::Hdf5Reader;
  [[nodiscard]] at::Tensor read(const std::string& dataset) const { return tensor(dataset); }
};

inline Verdict verify_checkpoint_in_process(const std::filesystem::path& path) {
  return Verdict{ckpt::verify_checkpoint(path), {}};
}

}  // namespace hpctrain::ckpt_file

namespace hpctrain::fuzz {

// A dataset as the old restore took it: element type, shape and bytes.
inline std::string dataset_reads(const ckpt_file::Hdf5Reader& file, const std::string& name) {
  const at::Tensor tensor = file.read(name).contiguous();
  std::string out = std::string(c10::toString(tensor.scalar_type())) + "[";
  for (const std::int64_t n : tensor.sizes()) out += std::to_string(n) + ",";
  const auto* bytes = static_cast<const char*>(tensor.data_ptr());
  return out + "]" + std::string(bytes, tensor.numel() * tensor.element_size());
}

}  // namespace hpctrain::fuzz
