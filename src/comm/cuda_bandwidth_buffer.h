// Device memory for the allreduce bandwidth table over NCCL (hpctrain doctor
// --nccl): filled and checked through copies to and from the host, which are
// outside the timed loop.
#pragma once

#include <cstddef>
#include <memory>

#include "comm/allreduce_bandwidth.h"
#include "handles/cuda_nccl.h"

namespace hpctrain::comm {

// `bytes` of device memory on the current device.
std::unique_ptr<BandwidthBuffer> cuda_bandwidth_buffer(handles::CudaNcclApiPtr api, std::size_t bytes);

}  // namespace hpctrain::comm
