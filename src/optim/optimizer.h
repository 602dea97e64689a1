// AdamW with two parameter groups: decayed, and exempt from weight decay by
// kind (optimizer.no_decay: biases, norm weights, embeddings by default).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/experiment.h"
#include "model/language_model.h"

namespace torch::optim {
class AdamW;
struct AdamWOptions;
}  // namespace torch::optim

namespace hpctrain::optim {

using AdamW = torch::optim::AdamW;

// AdamW with two groups: decayed, and exempt by kind (model::parameter_kind).
std::unique_ptr<AdamW> make_optimizer(model::LanguageModel& model, const config::OptimizerConfig& c);

// One AdamW step on the gradients times grad_scale (the clipping factor, see
// optim/grad_clip.h), the same rule as torch::optim::AdamW::step() and on its
// own state (so checkpoints and moment merging see no difference), but one pass
// over memory per parameter instead of LibTorch's chain of about ten tensor
// ops, each a pass of its own: those cost 8% of a GPT-2-small step on 2 cores.
// The gradients themselves are left unscaled. Parameters that are not
// contiguous float32 on the CPU take LibTorch's step, on scaled gradients.
void adamw_step(torch::optim::AdamW& optimizer, float grad_scale = 1);

// adamw_step's update over `n` contiguous float32 elements of one parameter,
// under its group's `options`, `step` being the parameter's count after this
// step. For optimizers that hold a parameter's state in pieces (ZeRO-1).
void adamw_update(const torch::optim::AdamWOptions& options, std::int64_t step, float grad_scale, float* param,
                  const float* grad, float* exp_avg, float* exp_avg_sq, std::int64_t n);

// Sets the learning rate of every group.
void set_learning_rate(torch::optim::AdamW& optimizer, double lr);

// AdamW's per-parameter state, in the model's parameter order; a parameter not
// stepped yet has step 0 and zero moments.
struct AdamState {
  std::vector<at::Tensor> exp_avg;
  std::vector<at::Tensor> exp_avg_sq;
  std::vector<std::int64_t> steps;
};
AdamState adam_state(torch::optim::AdamW& optimizer, const model::LanguageModel& model);
void restore_adam_state(torch::optim::AdamW& optimizer, const model::LanguageModel& model, const AdamState& state);

}  // namespace hpctrain::optim
