// adamw_step is LibTorch's AdamW in one pass: over several steps, with a
// decayed and an exempt group, state created lazily, a parameter without a
// gradient left alone and a learning-rate change, it must track
// torch::optim::AdamW::step() to float rounding, on the same state layout.
// Clipping folded into the step (grad_clip's scale) must give the very bits of
// clipping first with LibTorch's clip_grad_norm_.
#include <gtest/gtest.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>

// After torch/types.h: LibTorch 1.13's clip_grad.h uses tensors and ops
// without including them.
#include <torch/nn/utils/clip_grad.h>

#include <vector>

#include "optim/grad_clip.h"
#include "optim/optimizer.h"

namespace hpctrain::optim {
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

// Trainable copies of `start`, one per optimizer under comparison.
std::vector<torch::Tensor> leaf_copies(const std::vector<torch::Tensor>& start) {
  std::vector<torch::Tensor> copies;
  copies.reserve(start.size());
  for (const auto& t : start) copies.push_back(t.clone().requires_grad_());
  return copies;
}

TEST(AdamwStepTest, TracksLibTorchsAdamW) {
  torch::manual_seed(5);
  const std::vector<torch::Tensor> start = {torch::randn({300, 70}), torch::randn({70}), torch::randn({5, 3})};
  const std::vector<torch::Tensor> ours = leaf_copies(start), theirs = leaf_copies(start);
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

TEST(AdamwStepTest, FoldedClippingGivesTheBitsOfClippingFirst) {
  torch::manual_seed(6);
  // Sizes around the kernel's vector widths and the parallel grain, so both
  // the vector body and the scalar tails run.
  const std::vector<torch::Tensor> start = {torch::randn({70000}), torch::randn({37}), torch::randn({16, 3})};
  const std::vector<torch::Tensor> folded = leaf_copies(start), clipped = leaf_copies(start);
  auto fused = make({folded[0], folded[2]}, {folded[1]});
  auto reference = make({clipped[0], clipped[2]}, {clipped[1]});
  // Norms of about 300: a clip at 10 scales, one at 1e6 does not.
  for (const double max_norm : {10.0, 10.0, 1e6, 10.0}) {
    for (std::size_t i = 0; i < start.size(); ++i) {
      const auto g = torch::randn_like(start[i]);
      folded[i].mutable_grad() = g.clone();
      clipped[i].mutable_grad() = g.clone();
    }
    const GradClip clip = grad_clip(folded, max_norm);
    const double norm = torch::nn::utils::clip_grad_norm_(clipped, max_norm);
    EXPECT_EQ(clip.norm, norm);
    EXPECT_EQ(clip.scale < 1, max_norm < norm);
    adamw_step(fused, clip.scale);
    adamw_step(reference);
    for (std::size_t i = 0; i < start.size(); ++i) {
      EXPECT_TRUE(torch::equal(folded[i], clipped[i])) << "parameter " << i << " at max_norm " << max_norm;
    }
  }
  EXPECT_FALSE(torch::equal(folded[0], start[0]));
}

TEST(AdamwStepTest, GradClipWithoutGradientsIsANoOp) {
  const auto p = torch::randn({4}).requires_grad_();
  const GradClip clip = grad_clip({p}, 1.0);
  EXPECT_EQ(clip.norm, 0.0);
  EXPECT_EQ(clip.scale, 1.0F);
}

}  // namespace
}  // namespace hpctrain::optim
