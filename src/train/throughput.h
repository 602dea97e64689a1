// One definition of each speed a run reports, used by the trainer, the
// benches (bench/train_step_bench) and the docs (docs/training.md):
//   tokens/s         tokens trained, all ranks, over training seconds
//                    (evaluations excluded)
//   FLOPs per token  model::LanguageModel::flops_per_token: 6N plus the
//                    attention term 12·L·d·T (llm.c's and PaLM's count)
//   MFU              tokens/s × FLOPs per token over the matmul peak of
//                    every rank, measured at start-up in the precision the
//                    matmuls run in: bf16 for training.precision = "bf16"
//                    on a GPU, else fp32 (runtime/matmul_peak.h)
#pragma once

namespace hpctrain::train {

inline double tokens_per_second(double tokens, double seconds) { return seconds > 0 ? tokens / seconds : 0; }

inline double model_flops_utilization(double tokens_per_s, double flops_per_token, double peak_flops_per_rank,
                                      int ranks) {
  return tokens_per_s * flops_per_token / (peak_flops_per_rank * ranks);
}

}  // namespace hpctrain::train
