#include "reduce/ddap_reducer.h"

#include <torch/torch.h>

#include "reduce/flat_parameters.h"

namespace hpctrain::reduce {

DdapReducer::DdapReducer(model::LanguageModel& model, comm::Communicator& comm, DdapOptions options)
    : model_(model), comm_(comm), options_(std::move(options)), anchor_(flatten_parameters(model)) {}

DdapReducer::~DdapReducer() {
  // A merge still running would use the communicator after we are gone.
  if (merged_.valid()) merged_.wait();
}

void DdapReducer::after_step(std::int64_t step, bool epoch_end) {
  last_step_ = step;
  if (merged_.valid() && step - started_at_ >= options_.delay) apply();
  if (step % options_.merge_every == 0 || epoch_end) {
    if (merged_.valid()) apply();  // never two merges in flight
    start(step);
    if (!options_.overlapped) apply();
  }
}

void DdapReducer::finish() {
  if (merged_.valid()) apply();
  if (last_merge_applied_for_ == last_step_ && !options_.overlapped) return;
  const bool overlapped = options_.overlapped;
  options_.overlapped = false;
  start(last_step_);
  apply();
  options_.overlapped = overlapped;
}

DdapState DdapReducer::state() {
  DdapState s{anchor_.clone(),
              momentum_.defined() ? momentum_.clone() : at::Tensor(),
              merges_,
              last_step_,
              last_merge_applied_for_,
              -1,
              at::Tensor(),
              at::Tensor()};
  if (merged_.valid()) {
    const at::Tensor merged = merged_.get();
    std::promise<at::Tensor> ready;
    ready.set_value(merged);
    merged_ = ready.get_future();
    s.started_at = started_at_;
    s.theta_at_start = theta_at_start_.clone();
    s.merged = merged.clone();
  }
  return s;
}

void DdapReducer::restore(const DdapState& state) {
  anchor_ = state.anchor.clone();
  momentum_ = state.momentum.defined() ? state.momentum.clone() : at::Tensor();
  merges_ = state.merges;
  last_step_ = state.last_step;
  last_merge_applied_for_ = state.last_merge_applied_for;
  merged_ = std::future<at::Tensor>();
  started_at_ = state.started_at;
  theta_at_start_ = at::Tensor();
  if (state.started_at >= 0) {
    theta_at_start_ = state.theta_at_start.clone();
    std::promise<at::Tensor> ready;
    ready.set_value(state.merged.clone());
    merged_ = ready.get_future();
  }
}

void DdapReducer::start(std::int64_t step) {
  started_at_ = step;
  theta_at_start_ = flatten_parameters(model_);
  at::Tensor delta = theta_at_start_ - anchor_;
  const MergeRule rule = options_.rule;
  comm::Communicator& comm = comm_;
  if (options_.overlapped) {
    merged_ = std::async(std::launch::async,
                         [delta = std::move(delta), rule, &comm] { return merged_delta(delta, rule, comm); });
  } else {
    std::promise<at::Tensor> done;
    done.set_value(merged_delta(delta, rule, comm));
    merged_ = done.get_future();
  }
}

void DdapReducer::apply() {
  const at::Tensor merged = merged_.get();
  anchor_ = next_anchor(anchor_, merged, options_.rule, momentum_);
  // θ ← anchor + (θ(now) − θ(start)): zero for a blocking merge.
  unflatten_into_parameters(anchor_ + (flatten_parameters(model_) - theta_at_start_), model_);
  theta_at_start_ = at::Tensor();
  last_merge_applied_for_ = started_at_;
  ++merges_;
}

}  // namespace hpctrain::reduce
