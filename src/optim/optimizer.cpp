#include "optim/optimizer.h"

#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <type_traits>

#include "optim/adamw_kernel.h"

namespace hpctrain::optim {
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

std::unique_ptr<torch::optim::AdamW> make_optimizer(model::LanguageModel& model, const config::OptimizerConfig& c) {
  std::vector<torch::Tensor> decay;
  std::vector<torch::Tensor> no_decay;
  for (const auto& item : model.named_parameters()) {
    const config::ParameterKind kind = model::parameter_kind(item.key());
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

namespace {

bool fused_step_applies(const torch::Tensor& p) {
  const torch::Tensor& g = p.grad();
  return p.is_cpu() && p.scalar_type() == torch::kFloat32 && p.is_contiguous() && g.defined() && !g.is_sparse() &&
         g.scalar_type() == torch::kFloat32 && g.is_contiguous();
}

}  // namespace

void adamw_update(const torch::optim::AdamWOptions& o, std::int64_t step, float grad_scale, float* param,
                  const float* grad, float* exp_avg, float* exp_avg_sq, std::int64_t n) {
  const auto [beta1, beta2] = o.betas();
  AdamwScalars s;
  s.decay = static_cast<float>(1 - o.lr() * o.weight_decay());  // exactly 1 without weight decay
  s.beta1 = static_cast<float>(beta1);
  s.one_minus_beta1 = static_cast<float>(1 - beta1);
  s.beta2 = static_cast<float>(beta2);
  s.one_minus_beta2 = static_cast<float>(1 - beta2);
  s.sqrt_correction2 = static_cast<float>(std::sqrt(1 - std::pow(beta2, static_cast<double>(step))));
  s.step_size = static_cast<float>(o.lr() / (1 - std::pow(beta1, static_cast<double>(step))));
  s.eps = static_cast<float>(o.eps());
  s.grad_scale = grad_scale;
  at::parallel_for(0, n, 1 << 15, [&](std::int64_t begin, std::int64_t end) {
    adamw_kernel(s, param + begin, grad + begin, exp_avg + begin, exp_avg_sq + begin, end - begin);
  });
}

void adamw_step(torch::optim::AdamW& optimizer, float grad_scale) {
  auto& states = optimizer.state();
  using StateMap = std::remove_reference_t<decltype(states)>;
  for (const auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    for (const auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      const auto it = states.find(state_key<StateMap>(p));
      const auto* s =
          it == states.end() ? nullptr : static_cast<const torch::optim::AdamWParamState*>(it->second.get());
      const bool moments_fit = s == nullptr || (s->exp_avg().is_contiguous() && s->exp_avg_sq().is_contiguous() &&
                                                s->exp_avg().scalar_type() == torch::kFloat32 &&
                                                s->exp_avg_sq().scalar_type() == torch::kFloat32);
      if (!fused_step_applies(p) || !moments_fit || o.amsgrad()) {
        if (grad_scale != 1) {
          torch::NoGradGuard no_grad;
          for (auto& g : optimizer.param_groups()) {
            for (auto& parameter : g.params()) {
              if (parameter.grad().defined()) parameter.mutable_grad().mul_(grad_scale);
            }
          }
        }
        optimizer.step();
        return;
      }
    }
  }
  torch::NoGradGuard no_grad;
  for (auto& group : optimizer.param_groups()) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = states[state_key<StateMap>(p)];
      if (!slot) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
        fresh->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Contiguous));
        slot = std::move(fresh);
      }
      auto& s = static_cast<torch::optim::AdamWParamState&>(*slot);
      s.step(s.step() + 1);
      adamw_update(o, s.step(), grad_scale, p.data_ptr<float>(), p.grad().data_ptr<float>(),
                   s.exp_avg().data_ptr<float>(), s.exp_avg_sq().data_ptr<float>(), p.numel());
    }
  }
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

}  // namespace hpctrain::optim
