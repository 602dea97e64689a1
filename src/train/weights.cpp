#include "train/weights.h"

#include <torch/types.h>

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

}  // namespace hpctrain::train
