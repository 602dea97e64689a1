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
}

void average_gradients(model::LanguageModel& model, comm::Communicator& comm) {
  if (comm.size() == 1) return;
  std::vector<torch::Tensor> grads;
  for (auto& p : model.parameters()) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
    grads.push_back(p.grad());
  }
  std::vector<torch::Tensor> parts;
  for (auto& g : grads) parts.push_back(g.reshape({-1}));
  torch::Tensor flat = torch::cat(parts);
  comm.allreduce(flat.data_ptr(), static_cast<std::size_t>(flat.numel()), comm::DType::kFloat32,
                 comm::ReduceOp::kAverage);
  std::int64_t offset = 0;
  for (auto& g : grads) {
    g.copy_(flat.narrow(0, offset, g.numel()).view_as(g));
    offset += g.numel();
  }
}

}  // namespace hpctrain::train
