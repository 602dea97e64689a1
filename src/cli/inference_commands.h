// `hpctrain eval RUN|CKPT` and `hpctrain generate RUN|CKPT`: both load the
// newest checkpoint of a run (or with --best its best), or the file given;
// the trained weights, or with --ema their moving average.
#pragma once

#include "train/trained_model.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hpctrain::cli {

struct EvalOptions {
  train::WeightsChoice weights;
  std::string split = "val";  // or "test"
  bool sample = false;        // the periodic evaluations' sample, not the whole split
};

// Loss and perplexity (and MLM accuracy) over a split of the run's data set,
// the whole split by default; works under mpiexec/srun like training.
void run_eval(const std::string& target, const std::vector<std::string>& overrides, const EvalOptions& options);

struct GenerateOptions {
  std::optional<std::string> prompt;  // defaults: the run's [eval] settings
  std::optional<std::int64_t> tokens;
  std::optional<double> temperature;
  std::optional<std::int64_t> top_k;
  std::optional<std::uint64_t> seed;
  train::WeightsChoice weights;
};

void run_generate(const std::string& target, const GenerateOptions& options);

}  // namespace hpctrain::cli
