// Whether this build has the NCCL backend, in one line for `hpctrain --version`.
#pragma once

#include <string>

namespace hpctrain::comm {

// "built against NCCL 2.28.9, CUDA 13.0 headers; libnccl.so.2 and
// libcudart.so.13 are opened when a model goes on a GPU", or why it is absent.
std::string nccl_backend_summary();

}  // namespace hpctrain::comm
