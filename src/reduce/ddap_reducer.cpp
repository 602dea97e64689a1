#include "reduce/ddap_reducer.h"

#include <torch/torch.h>

#include <stdexcept>

#include "reduce/flat_parameters.h"

namespace hpctrain::reduce {
namespace {

// First moments, then second moments: the order the flat vector keeps.
std::vector<at::Tensor> in_order(const OptimizerMoments& m) {
  std::vector<at::Tensor> all = m.first;
  all.insert(all.end(), m.second.begin(), m.second.end());
  return all;
}

}  // namespace

DdapReducer::DdapReducer(model::LanguageModel& model, comm::Communicator& comm, DdapOptions options,
                         MomentSource moments)
    : model_(model),
      comm_(comm),
      options_(std::move(options)),
      moments_(std::move(moments)),
      anchor_(flatten_parameters(model)) {
  if (options_.merge_moments && !moments_) {
    throw std::invalid_argument("DdapReducer: merge_moments needs the optimizer's moments");
  }
}

DdapReducer::~DdapReducer() {
  // A merge still running would use the communicator after we are gone.
  if (merged_.valid()) merged_.wait();
}

std::future<DdapReducer::Merged> DdapReducer::ready(Merged merged) {
  std::promise<Merged> done;
  done.set_value(std::move(merged));
  return done.get_future();
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
  DdapState s;
  s.anchor = anchor_.clone();
  if (momentum_.defined()) s.momentum = momentum_.clone();
  s.merges = merges_;
  s.last_step = last_step_;
  s.last_merge_applied_for = last_merge_applied_for_;
  if (merged_.valid()) {
    const Merged merged = merged_.get();
    merged_ = ready(merged);
    s.started_at = started_at_;
    s.theta_at_start = theta_at_start_.clone();
    s.merged = merged.delta.clone();
    if (merged.moments.defined()) {
      s.moments_at_start = moments_at_start_.clone();
      s.merged_moments = merged.moments.clone();
    }
  }
  return s;
}

void DdapReducer::restore(const DdapState& state) {
  anchor_ = state.anchor.clone();
  momentum_ = state.momentum.defined() ? state.momentum.clone() : at::Tensor();
  merges_ = state.merges;
  last_step_ = state.last_step;
  last_merge_applied_for_ = state.last_merge_applied_for;
  merged_ = std::future<Merged>();
  started_at_ = state.started_at;
  theta_at_start_ = at::Tensor();
  moments_at_start_ = at::Tensor();
  if (state.started_at >= 0) {
    theta_at_start_ = state.theta_at_start.clone();
    Merged merged{state.merged.clone(), at::Tensor()};
    if (state.merged_moments.defined()) {
      moments_at_start_ = state.moments_at_start.clone();
      merged.moments = state.merged_moments.clone();
    }
    merged_ = ready(std::move(merged));
  }
}

void DdapReducer::start(std::int64_t step) {
  started_at_ = step;
  theta_at_start_ = flatten_parameters(model_);
  moments_at_start_ = options_.merge_moments ? flatten(in_order(moments_())) : at::Tensor();
  auto merge = [delta = theta_at_start_ - anchor_, moments = moments_at_start_, rule = options_.rule, &comm = comm_]() {
    Merged m{merged_delta(delta, rule, comm), at::Tensor()};
    if (moments.defined()) {
      m.moments = moments.clone();
      comm.allreduce(m.moments.data_ptr(), static_cast<std::size_t>(m.moments.numel()), comm::DType::kFloat32,
                     comm::ReduceOp::kAverage);
    }
    return m;
  };
  if (options_.overlapped) {
    merged_ = std::async(std::launch::async, std::move(merge));
  } else {
    merged_ = ready(merge());
  }
}

void DdapReducer::apply() {
  const Merged merged = merged_.get();
  anchor_ = next_anchor(anchor_, merged.delta, options_.rule, momentum_);
  // θ ← anchor + (θ(now) − θ(start)): zero for a blocking merge.
  unflatten_into_parameters(anchor_ + (flatten_parameters(model_) - theta_at_start_), model_);
  if (merged.moments.defined()) {
    const OptimizerMoments live = moments_();
    const std::vector<at::Tensor> tensors = in_order(live);
    at::Tensor moments = merged.moments + (flatten(tensors) - moments_at_start_);
    std::int64_t first = 0;
    for (const auto& t : live.first) first += t.numel();
    moments.narrow(0, first, moments.numel() - first).clamp_min_(0);
    unflatten_into(moments, tensors);
  }
  theta_at_start_ = at::Tensor();
  moments_at_start_ = at::Tensor();
  last_merge_applied_for_ = started_at_;
  ++merges_;
}

}  // namespace hpctrain::reduce
