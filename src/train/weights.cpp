#include "train/weights.h"

#include <torch/torch.h>

#include "support/sha256.h"

namespace hpctrain::train {

std::string weights_sha256(const model::LanguageModel& model) {
  support::Sha256 hash;
  for (const auto& item : model.named_parameters()) {
    const torch::Tensor p = item.value().detach().to(torch::kCPU).contiguous();
    hash.update(item.key());
    hash.update(std::string_view(static_cast<const char*>(p.data_ptr()), p.nbytes()));
  }
  return support::to_hex(hash.finish());
}

void broadcast_parameters(model::LanguageModel& model, comm::Communicator& comm) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) {
    comm.broadcast(p.data_ptr(), static_cast<std::size_t>(p.numel()), comm::DType::kFloat32, 0);
  }
  // NCCL work is asynchronous to the host; a barrier on the same communicator
  // orders it before the first step reads the weights.
  comm.barrier();
}

}  // namespace hpctrain::train
