// [optimizer]: AdamW's hyperparameters and which parameters weight decay exempts.
#pragma once

#include <cstdint>
#include <vector>

#include "config/model_config.h"

namespace hpctrain::config {

class SectionReader;

struct OptimizerConfig {
  double lr = 3e-4;  // peak learning rate
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;  // global-norm clip; 0 turns it off
  // Parameter kinds exempt from weight decay.
  std::vector<ParameterKind> no_decay{ParameterKind::kBias, ParameterKind::kNorm, ParameterKind::kEmbedding};

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static OptimizerConfig read(SectionReader section);
};

}  // namespace hpctrain::config
