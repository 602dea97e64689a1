#include "config/optimizer_config.h"

#include <fmt/format.h>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {

OptimizerConfig OptimizerConfig::read(SectionReader section) {
  OptimizerConfig o;
  o.lr = section.number("lr", o.lr, 0.0, 10.0);
  o.weight_decay = section.number("weight_decay", o.weight_decay, 0.0, 10.0);
  o.beta1 = section.number("beta1", o.beta1, 0.0, 0.999999);
  o.beta2 = section.number("beta2", o.beta2, 0.0, 0.999999);
  o.eps = section.number("eps", o.eps, 0.0, 1.0);
  o.grad_clip = section.number("grad_clip", o.grad_clip, 0.0, 1e9);
  o.no_decay =
      section.choices("no_decay", o.no_decay, {ParameterKind::kBias, ParameterKind::kNorm, ParameterKind::kEmbedding});
  section.finish();
  return o;
}

}  // namespace hpctrain::config
