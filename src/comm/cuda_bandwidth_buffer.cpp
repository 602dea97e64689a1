#include "comm/cuda_bandwidth_buffer.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace hpctrain::comm {
namespace {

class CudaBandwidthBuffer final : public BandwidthBuffer {
 public:
  CudaBandwidthBuffer(handles::CudaNcclApiPtr api, std::size_t bytes)
      : api_(std::move(api)), device_(api_, bytes), host_(bytes / sizeof(float)) {}

  void* data() override { return device_.get(); }

  void fill(float value, std::size_t count) override {
    std::fill_n(host_.begin(), count, value);
    handles::check_cuda(*api_, api_->memcpy(device_.get(), host_.data(), count * sizeof(float), cudaMemcpyHostToDevice),
                        "cudaMemcpy(host to device)");
  }

  const float* read(std::size_t count) override {
    handles::check_cuda(*api_, api_->memcpy(host_.data(), device_.get(), count * sizeof(float), cudaMemcpyDeviceToHost),
                        "cudaMemcpy(device to host)");
    return host_.data();
  }

 private:
  handles::CudaNcclApiPtr api_;
  handles::CudaBuffer device_;
  std::vector<float> host_;
};

}  // namespace

std::unique_ptr<BandwidthBuffer> cuda_bandwidth_buffer(handles::CudaNcclApiPtr api, std::size_t bytes) {
  return std::make_unique<CudaBandwidthBuffer>(std::move(api), bytes);
}

}  // namespace hpctrain::comm
