// [training]: steps, batch geometry, precision, device, threads, a planned
// stop and the weight average.
#pragma once

#include <cstdint>

#include "config/choices.h"

namespace hpctrain::config {

class SectionReader;

enum class Precision { kFp32, kBf16 };
enum class Device { kAuto, kCpu, kCuda };

template <>
struct ChoiceTable<Precision> {
  static constexpr std::array<Choice<Precision>, 2> entries{{{"fp32", Precision::kFp32}, {"bf16", Precision::kBf16}}};
};
template <>
struct ChoiceTable<Device> {
  static constexpr std::array<Choice<Device>, 3> entries{
      {{"auto", Device::kAuto}, {"cpu", Device::kCpu}, {"cuda", Device::kCuda}}};
};

struct TrainingConfig {
  std::int64_t steps = 1000;
  std::int64_t batch_size = 16;            // global: samples per optimizer step over all ranks
  std::int64_t micro_batch_size = 8;       // the most per rank per forward/backward; the rest is accumulation
  Precision precision = Precision::kFp32;  // or bf16 autocast with fp32 master weights
  Device device = Device::kAuto;
  std::int64_t threads = 0;     // per rank; 0: SLURM_CPUS_PER_TASK or cores / local ranks
  std::int64_t stop_after = 0;  // stop with a checkpoint after this step (time-sliced jobs); 0: never
  // > 0: keep an exponential moving average of the evaluation weights,
  // ema <- decay * ema + (1 - decay) * weights after every step (train/weight_average.h).
  double ema_decay = 0;

  // Reads the section and checks it (errors at the key's file:line:column or --set).
  static TrainingConfig read(SectionReader section);
};

}  // namespace hpctrain::config
