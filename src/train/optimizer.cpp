#include "train/optimizer.h"

#include <torch/torch.h>

#include <algorithm>
#include <sstream>
#include <type_traits>

namespace hpctrain::train {
namespace {

// LibTorch keys optimizer state by the parameter's TensorImpl: as its printed
// address up to 1.13, as the pointer itself from 2.x on.
template <class StateMap>
typename StateMap::key_type state_key(const torch::Tensor& parameter) {
  using Key = typename StateMap::key_type;
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream out;
    out << parameter.unsafeGetTensorImpl();
    return out.str();
  } else {
    return static_cast<Key>(parameter.unsafeGetTensorImpl());
  }
}

}  // namespace

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

AdamState adam_state(torch::optim::AdamW& optimizer, const model::LanguageModel& model) {
  auto& states = optimizer.state();
  using StateMap = std::remove_reference_t<decltype(states)>;
  AdamState out;
  for (const auto& p : model.parameters()) {
    const auto it = states.find(state_key<StateMap>(p));
    if (it == states.end()) {
      out.exp_avg.push_back(torch::zeros_like(p));
      out.exp_avg_sq.push_back(torch::zeros_like(p));
      out.steps.push_back(0);
      continue;
    }
    const auto& s = static_cast<const torch::optim::AdamWParamState&>(*it->second);
    out.exp_avg.push_back(s.exp_avg());
    out.exp_avg_sq.push_back(s.exp_avg_sq());
    out.steps.push_back(s.step());
  }
  return out;
}

void restore_adam_state(torch::optim::AdamW& optimizer, const model::LanguageModel& model, const AdamState& state) {
  auto& states = optimizer.state();
  using StateMap = std::remove_reference_t<decltype(states)>;
  const auto parameters = model.parameters();
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const auto key = state_key<StateMap>(parameters[i]);
    if (state.steps[i] == 0) {
      states.erase(key);
      continue;
    }
    auto s = std::make_unique<torch::optim::AdamWParamState>();
    s->step(state.steps[i]);
    s->exp_avg(state.exp_avg[i].to(parameters[i].device()).clone());
    s->exp_avg_sq(state.exp_avg_sq[i].to(parameters[i].device()).clone());
    states[key] = std::move(s);
  }
}

}  // namespace hpctrain::train
