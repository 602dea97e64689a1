// `hpctrain eval RUN|CKPT` (the seeds' test mode) and `hpctrain generate
// RUN|CKPT`: both load the newest checkpoint of a run, or the file given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hpctrain::cli {

// Validation loss and perplexity (and MLM accuracy) over the run's data set;
// works under mpiexec/srun like training.
void run_eval(const std::string& target, const std::vector<std::string>& overrides);

struct GenerateOptions {
  std::optional<std::string> prompt;  // defaults: the run's [eval] settings
  std::optional<std::int64_t> tokens;
  std::optional<double> temperature;
  std::optional<std::int64_t> top_k;
  std::optional<std::uint64_t> seed;
};

void run_generate(const std::string& target, const GenerateOptions& options);

}  // namespace hpctrain::cli
