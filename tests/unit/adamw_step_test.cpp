// adamw_step is LibTorch's AdamW in one pass: over several steps, with a
// decayed and an exempt group, state created lazily, a parameter without a
// gradient left alone and a learning-rate change, it must track
// torch::optim::AdamW::step() to float rounding, on the same state layout.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "train/optimizer.h"

namespace hpctrain::train {
namespace {

torch::optim::AdamW make(const std::vector<torch::Tensor>& decayed, const std::vector<torch::Tensor>& exempt) {
  auto options = [](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).eps(1e-8).weight_decay(wd));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decayed, options(0.1));
  groups.emplace_back(exempt, options(0.0));
  return torch::optim::AdamW(std::move(groups), torch::optim::AdamWOptions(1e-2));
}

TEST(AdamwStepTest, TracksLibTorchsAdamW) {
  torch::manual_seed(5);
  const std::vector<torch::Tensor> start = {torch::randn({300, 70}), torch::randn({70}), torch::randn({5, 3})};
  std::vector<torch::Tensor> ours, theirs;
  for (const auto& t : start) {
    ours.push_back(t.clone().requires_grad_());
    theirs.push_back(t.clone().requires_grad_());
  }
  auto fused = make({ours[0], ours[2]}, {ours[1]});
  auto reference = make({theirs[0], theirs[2]}, {theirs[1]});
  for (int step = 0; step < 6; ++step) {
    for (std::size_t i = 0; i < start.size(); ++i) {
      // The last parameter has no gradient in the first two steps.
      const bool has_grad = i != 2 || step >= 2;
      const auto g = torch::randn_like(start[i]);
      ours[i].mutable_grad() = has_grad ? g.clone() : torch::Tensor();
      theirs[i].mutable_grad() = has_grad ? g.clone() : torch::Tensor();
    }
    if (step == 3) {
      for (auto* o : {&fused, &reference}) {
        for (auto& group : o->param_groups()) static_cast<torch::optim::AdamWOptions&>(group.options()).lr(3e-3);
      }
    }
    adamw_step(fused);
    reference.step();
    for (std::size_t i = 0; i < start.size(); ++i) {
      EXPECT_TRUE(torch::allclose(ours[i], theirs[i], 1e-6, 1e-7)) << "parameter " << i << " after step " << step;
    }
  }
  EXPECT_EQ(fused.state().size(), reference.state().size());  // the same state, by the same keys
  EXPECT_FALSE(torch::equal(ours[0], start[0]));
  EXPECT_FALSE(torch::equal(ours[2], start[2]));
}

}  // namespace
}  // namespace hpctrain::train
