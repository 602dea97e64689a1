// DDAP runs on the tiny model that the reducer tests compare: straight
// through, or stopped and continued by a new reducer from the state a
// checkpoint keeps.
#pragma once

#include <torch/optim/adamw.h>

#include <functional>

#include "reduce/ddap_reducer.h"
#include "reduce/flat_parameters.h"
#include "tiny_model.h"

namespace hpctrain::reduce {

// `steps` steps of DDAP under `p` from the tiny model, then finish(); the
// final weights. With `stop` > 0 the run stops after `stop` steps and a new
// reducer continues from the state the first one kept, this rank's replica
// restored as a checkpoint's load does (the new reducer broadcasts rank 0's
// weights); `at_stop` sees the model and that state and may change the state.
inline torch::Tensor ddap_run(const config::ParallelConfig& p, comm::Communicator& merges, comm::Communicator& control,
                              int steps, int stop = 0,
                              const std::function<void(model::LanguageModel&, DdapState&)>& at_stop = {}) {
  auto model = tiny_model();
  optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(1e-2));
  if (stop == 0) {
    DdapReducer ddap(p, *model, optimizer, merges, control);
    train_steps(ddap, *model, optimizer, control.rank(), 0, steps);
    ddap.finish();
    return flatten_parameters(*model);
  }
  DdapState state;
  {
    DdapReducer before(p, *model, optimizer, merges, control);
    train_steps(before, *model, optimizer, control.rank(), 0, stop);
    state = before.state();
  }
  if (at_stop) at_stop(*model, state);
  const at::Tensor replica = flatten_parameters(*model);
  DdapReducer after(p, *model, optimizer, merges, control);
  unflatten_into_parameters(replica, *model);
  after.restore(state);
  train_steps(after, *model, optimizer, control.rank(), stop, steps);
  after.finish();
  return flatten_parameters(*model);
}

}  // namespace hpctrain::reduce
