// The one error type of a checkpoint that cannot be written, read or trusted:
// its message names the file and, where there is one, the dataset or attribute.
#pragma once

#include <stdexcept>

namespace hpctrain::ckpt_file {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hpctrain::ckpt_file
