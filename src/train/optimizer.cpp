#include "train/optimizer.h"

#include <torch/torch.h>

#include <algorithm>

namespace hpctrain::train {

std::string parameter_kind(const std::string& name) {
  if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) return "bias";
  if (name.find("_emb.") != std::string::npos) return "embedding";
  for (const char* norm : {"ln1.", "ln2.", "ln_f.", "emb_ln.", "mlm.ln."}) {
    if (name.find(norm) != std::string::npos) return "norm";
  }
  return "weight";
}

std::unique_ptr<torch::optim::AdamW> make_optimizer(model::LanguageModel& model, const config::OptimizerConfig& c) {
  std::vector<torch::Tensor> decay;
  std::vector<torch::Tensor> no_decay;
  for (const auto& item : model.named_parameters()) {
    const std::string kind = parameter_kind(item.key());
    const bool exempt = std::find(c.no_decay.begin(), c.no_decay.end(), kind) != c.no_decay.end();
    (exempt ? no_decay : decay).push_back(item.value());
  }
  auto options = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(c.lr).betas({c.beta1, c.beta2}).eps(c.eps).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(c.weight_decay));
  groups.emplace_back(no_decay, options(0.0));
  return std::make_unique<torch::optim::AdamW>(std::move(groups), torch::optim::AdamWOptions(c.lr));
}

void set_learning_rate(torch::optim::AdamW& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

}  // namespace hpctrain::train
