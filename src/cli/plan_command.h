// `hpctrain plan EXP.toml`: which reducer for this link. Run under the
// launcher training will use (mpiexec -n N, srun), it measures on these ranks
// and devices the experiment's step without communication (a DDAP local
// step), DDP's whole step, and one allreduce of the model; it then states
// DDP's communication share and what DDAP would cost per step for several
// merge intervals H, and weighs that against the tokens DDAP needs for the
// same loss (docs/reducers.md, "What a local step is worth"). Random tokens:
// no data set is read, no run directory written.
#pragma once

#include <string>
#include <vector>

namespace hpctrain::cli {

struct PlanOptions {
  int steps = 5;   // timed steps per measurement, after
  int warmup = 2;  // untimed ones
};

void run_plan(const std::string& experiment_file, const std::vector<std::string>& overrides,
              const PlanOptions& options);

}  // namespace hpctrain::cli
