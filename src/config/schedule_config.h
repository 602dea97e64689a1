// [schedule]: the learning rate's warm-up and decay (optim/lr_schedule.h).
#pragma once

#include <cstdint>

#include "config/choices.h"

namespace hpctrain::config {

class SectionReader;

enum class Decay { kCosine, kLinear, kConstant };

template <>
struct ChoiceTable<Decay> {
  static constexpr std::array<Choice<Decay>, 3> entries{
      {{"cosine", Decay::kCosine}, {"linear", Decay::kLinear}, {"constant", Decay::kConstant}}};
};

struct ScheduleConfig {
  std::int64_t warmup_steps = 100;
  Decay decay = Decay::kCosine;  // after warm-up
  double min_lr_ratio = 0.1;     // the decay ends at lr * min_lr_ratio

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static ScheduleConfig read(SectionReader section);
};

}  // namespace hpctrain::config
