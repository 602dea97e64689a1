#include "reduce/ddap_reducer.h"

#include <fmt/format.h>
#include <torch/types.h>

#include "reduce/ddap_reshard.h"
#include "reduce/flat_parameters.h"
#include "reduce/replica_state.h"
#include "reduce/weights_broadcast.h"

namespace hpctrain::reduce {

DdapReducer::DdapReducer(const config::ParallelConfig& parallel, model::LanguageModel& model, optim::AdamW& optimizer,
                         comm::Communicator& merges, comm::Communicator& control,
                         std::unique_ptr<comm::Communicator> owned)
    : Reducer(model, optimizer),
      parallel_(parallel),
      rule_(MergeRule::of(parallel)),
      fragments_(parameter_sizes(model), parallel.merge_fragments, parallel.merge_every),
      wire_(make_merge_wire(parallel, rule_, merges.size())),
      sync_wire_(parallel.sync_wire == config::WireCodec::kFp32 ? nullptr
                                                                : make_encoded_wire(parallel.sync_wire, merges.size())),
      overlapped_(parallel.merge_mode == config::MergeMode::kOverlapped),
      owned_(std::move(owned)),
      comm_(merges),
      control_(control) {
  broadcast_parameters(model_, comm_);
  anchor_ = flatten_parameters(model_);
  seen_bytes_ = comm_.bytes_sent();
}

void DdapReducer::count_bytes() {
  const std::uint64_t now = comm_.bytes_sent();
  reported_bytes_ += now - seen_bytes_ + restored_merge_bytes_;
  seen_bytes_ = now;
  restored_merge_bytes_ = 0;
}

std::string DdapReducer::describe() const {
  return fmt::format(
      "reducer ddap: {}{} merge every {} steps{}, {}{}, {} wire{}",
      parallel_.sync_steps > 0 ? fmt::format("{} synchronous steps{}, then ", parallel_.sync_steps,
                                             sync_wire_ ? " (gradients " + sync_wire_->describe() + ")" : "")
                               : "",
      config::name_of(parallel_.merge), parallel_.merge_every,
      parallel_.merge_fragments > 1 ? fmt::format(" in {} fragments (one every {} steps)", parallel_.merge_fragments,
                                                  parallel_.merge_every / parallel_.merge_fragments)
                                    : "",
      config::name_of(parallel_.merge_mode),
      overlapped_ ? fmt::format(" (applied {} step(s) later)", parallel_.merge_delay) : "", wire_->describe(),
      parallel_.merge_moments ? ", AdamW moments merged too" : "");
}

void DdapReducer::begin_step() {
  for (auto& p : model_.parameters()) p.mutable_grad().reset();
}

void DdapReducer::end_backward() {
  if (!synchronous()) return;
  std::vector<at::Tensor> grads;
  for (auto& p : model_.parameters()) {
    if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);  // a parameter this batch did not reach
    grads.push_back(p.grad());
  }
  at::Tensor flat = flatten(grads);
  if (sync_wire_) {
    // The wire carries the mean of the ranks' values; the trainer wants their sum.
    if (sync_residual_.defined()) flat += sync_residual_;
    MergeWire::Outgoing outgoing = sync_wire_->encode(flat);
    sync_residual_ = outgoing.residual;
    flat = sync_wire_->merge(outgoing.payload, flat.numel(), comm_) * static_cast<double>(comm_.size());
  } else {
    comm_.allreduce(flat.data_ptr(), static_cast<std::size_t>(flat.numel()), comm::DType::kFloat32,
                    comm::ReduceOp::kSum);
  }
  unflatten_into(flat, grads);
  count_bytes();
}

std::vector<std::string> DdapReducer::incompatibilities(const ckpt_file::CheckpointInfo& info) const {
  std::vector<std::string> diff;
  if (info.reducer != "ddap") diff.push_back(fmt::format("parallel.reducer: checkpoint {} vs run ddap", info.reducer));
  return diff;
}

namespace {

// A host copy nobody else holds: one copy whether `t` lives on a GPU or not.
torch::Tensor host_copy(const torch::Tensor& t) { return t.is_cpu() ? t.clone() : t.to(torch::kCPU); }

}  // namespace

void DdapReducer::gather_replicas(ckpt::Snapshot& s, const DdapState& d) {
  const int rank = control_.rank();
  const optim::AdamState adam = optim::adam_state(optimizer_, model_);
  // Each rank's replica, moments and (with a merge in flight) θ at its start,
  // broadcast from each rank in turn and kept by rank 0.
  std::vector<at::Tensor> mine_parts = {flatten(model_.parameters()).to(torch::kCPU),
                                        flatten(adam.exp_avg).to(torch::kCPU),
                                        flatten(adam.exp_avg_sq).to(torch::kCPU)};
  if (d.started_at >= 0) mine_parts.push_back(d.theta_at_start.to(torch::kCPU));
  if (d.moments_at_start.defined()) mine_parts.push_back(d.moments_at_start.to(torch::kCPU));
  if (d.residual.defined()) mine_parts.push_back(d.residual.to(torch::kCPU));
  if (d.sync_residual.defined()) mine_parts.push_back(d.sync_residual.to(torch::kCPU));
  const torch::Tensor mine = torch::cat(mine_parts);
  mine_parts.clear();
  const torch::Tensor my_steps = torch::tensor(adam.steps, torch::kInt64);
  const std::int64_t n = model_.parameter_count();
  for (int r = 0; r < control_.size(); ++r) {
    // The root's buffer is only read by the broadcast: its own, not a copy.
    torch::Tensor values = r == rank ? mine : torch::empty_like(mine);
    torch::Tensor steps = r == rank ? my_steps : torch::empty_like(my_steps);
    control_.broadcast(values.data_ptr(), static_cast<std::size_t>(values.numel()), comm::DType::kFloat32, r);
    control_.broadcast(steps.data_ptr(), static_cast<std::size_t>(steps.numel()), comm::DType::kInt64, r);
    if (rank != 0) continue;
    const std::string group = ddap_replica_group(r);
    ckpt::add_parameters(s, group + "/model", values.narrow(0, 0, n), model_);
    ckpt::add_parameters(s, group + "/optimizer/exp_avg", values.narrow(0, n, n), model_);
    ckpt::add_parameters(s, group + "/optimizer/exp_avg_sq", values.narrow(0, 2 * n, n), model_);
    std::size_t i = 0;
    for (const auto& item : model_.named_parameters()) {
      s.tensors.emplace_back(group + "/optimizer/step/" + item.key(),
                             steps.narrow(0, static_cast<std::int64_t>(i), 1).clone());
      ++i;
    }
    std::int64_t offset = 3 * n;  // the optional parts, in mine_parts' order
    const auto take = [&](const std::string& slash_name, std::int64_t count) {
      s.tensors.emplace_back(group + slash_name, values.narrow(0, offset, count).clone());
      offset += count;
    };
    if (d.started_at >= 0) take("/ddap_theta_at_start", d.merging.size());
    if (d.moments_at_start.defined()) take("/ddap_moments_at_start", 2 * n);
    if (d.residual.defined()) take("/ddap_residual", n);
    if (d.sync_residual.defined()) take("/ddap_sync_residual", n);
  }
}

void DdapReducer::save(ckpt::Snapshot& s) {
  const int rank = control_.rank();
  const DdapState d = state();
  if (s.sharded) {
    // Each rank's shard holds its own replica, copied once; nothing travels.
    const std::string group = ddap_replica_group(rank);
    save_replica(s, group + "/model", group + "/optimizer", model_, optimizer_);
    if (d.started_at >= 0) s.tensors.emplace_back(group + "/ddap_theta_at_start", host_copy(d.theta_at_start));
    if (d.moments_at_start.defined()) {
      s.tensors.emplace_back(group + "/ddap_moments_at_start", host_copy(d.moments_at_start));
    }
    if (d.residual.defined()) s.tensors.emplace_back(group + "/ddap_residual", host_copy(d.residual));
    if (d.sync_residual.defined()) s.tensors.emplace_back(group + "/ddap_sync_residual", host_copy(d.sync_residual));
  } else {
    gather_replicas(s, d);
  }
  if (rank != 0) return;
  ckpt::add_parameters(s, "model", d.anchor.to(torch::kCPU), model_);
  s.tensors.emplace_back("ddap/anchor", d.anchor.to(torch::kCPU).clone());
  if (d.momentum.defined()) s.tensors.emplace_back("ddap/momentum", d.momentum.to(torch::kCPU).clone());
  if (d.started_at >= 0) s.tensors.emplace_back("ddap/merged", d.merged.to(torch::kCPU).clone());
  if (d.merged_moments.defined())
    s.tensors.emplace_back("ddap/merged_moments", d.merged_moments.to(torch::kCPU).clone());
  s.ints.insert(s.ints.end(), {{"ddap_merges", d.merges},
                               {"ddap_last_step", d.last_step},
                               {"ddap_last_merge_applied_for", d.last_merge_applied_for},
                               {"ddap_started_at", d.started_at}});
  if (d.started_at >= 0) {
    s.ints.insert(s.ints.end(), {{"ddap_merge_bytes", d.merge_bytes},
                                 {"ddap_merge_begin", d.merging.begin},
                                 {"ddap_merge_end", d.merging.end}});
  }
}

FlatRange merge_in_flight_range(const ckpt::CheckpointReader& c, std::int64_t n) {
  if (!c.file().has_attribute("ddap_merge_begin") && !c.file().has_attribute("ddap_merge_end")) return {0, n};
  const FlatRange range{c.integer("ddap_merge_begin", 0), c.integer("ddap_merge_end", 1)};
  if (range.begin >= range.end || range.end > n) {
    throw ckpt::CheckpointError(
        fmt::format("{}: the merge in flight covers values [{}, {}), not a part of the {} "
                    "parameters' values (attributes ddap_merge_begin, ddap_merge_end)",
                    c.name(), range.begin, range.end, n));
  }
  return range;
}

void DdapReducer::load(const ckpt::CheckpointReader& c) {
  const auto device = model_.parameters().front().device();
  if (c.info().world_size != control_.size()) {  // the replicas belong to other ranks: start from their merge
    DdapResume resume = merge_checkpoint_replicas(c, model_, rule_);
    resume.state.anchor = resume.state.anchor.to(device);
    unflatten_into_parameters(resume.state.anchor, model_);
    optim::restore_adam_state(optimizer_, model_, resume.adam);
    if (resume.state.momentum.defined()) resume.state.momentum = resume.state.momentum.to(device);
    if (resume.state.residual.defined()) resume.state.residual = resume.state.residual.to(device);
    if (resume.state.sync_residual.defined()) resume.state.sync_residual = resume.state.sync_residual.to(device);
    restore(resume.state);
    return;
  }
  const std::string group = ddap_replica_group(control_.rank());
  load_replica(c, group + "/model", group + "/optimizer", model_, optimizer_);
  const std::int64_t n = model_.parameter_count();
  DdapState d;
  d.anchor = c.tensor("ddap/anchor", n, torch::kFloat32).to(device);
  if (c.has("ddap/momentum")) d.momentum = c.tensor("ddap/momentum", n, torch::kFloat32).to(device);
  d.merges = c.integer("ddap_merges", 0);
  d.last_step = c.integer("ddap_last_step", 0);
  d.last_merge_applied_for = c.integer("ddap_last_merge_applied_for", -1);
  d.started_at = c.integer("ddap_started_at", -1);
  if (c.has(group + "/ddap_residual")) d.residual = c.tensor(group + "/ddap_residual", n, torch::kFloat32).to(device);
  if (c.has(group + "/ddap_sync_residual"))
    d.sync_residual = c.tensor(group + "/ddap_sync_residual", n, torch::kFloat32).to(device);
  if (d.started_at >= 0) {
    // Format 5 did not count bytes: its merge in flight counts as none.
    if (c.file().has_attribute("ddap_merge_bytes")) d.merge_bytes = c.integer("ddap_merge_bytes", 0);
    d.merging = merge_in_flight_range(c, n);
    d.theta_at_start = c.tensor(group + "/ddap_theta_at_start", d.merging.size(), torch::kFloat32).to(device);
    d.merged = c.tensor("ddap/merged", d.merging.size(), torch::kFloat32).to(device);
    if (c.has("ddap/merged_moments")) {
      d.moments_at_start = c.tensor(group + "/ddap_moments_at_start", 2 * n, torch::kFloat32).to(device);
      d.merged_moments = c.tensor("ddap/merged_moments", 2 * n, torch::kFloat32).to(device);
    }
  }
  restore(d);
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

void DdapReducer::after_optimizer_step(std::int64_t step, bool epoch_end) {
  last_step_ = step;
  if (step <= parallel_.sync_steps) {  // one model on every rank: the anchor is it
    anchor_ = flatten_parameters(model_);
    last_merge_applied_for_ = step;
    // The local steps send no gradients: the last one's rounding is not owed.
    if (step == parallel_.sync_steps) sync_residual_ = at::Tensor();
    return;
  }
  if (merged_.valid() && step - started_at_ >= parallel_.merge_delay) apply();
  const std::optional<FlatRange> due = epoch_end ? fragments_.whole() : fragments_.due(step - parallel_.sync_steps);
  if (due) {
    if (merged_.valid()) apply();  // never two merges in flight
    start(step, *due, overlapped_);
    if (!overlapped_) apply();
  }
}

void DdapReducer::finish() {
  if (merged_.valid()) apply();
  if (last_step_ <= parallel_.sync_steps) return;  // the replicas are one model
  if (last_merge_applied_for_ == last_step_ && !overlapped_) return;
  start(last_step_, fragments_.whole(), false);  // the last merge blocks, whatever the mode
  apply();
}

DdapState DdapReducer::state() {
  DdapState s;
  s.anchor = anchor_.clone();
  if (momentum_.defined()) s.momentum = momentum_.clone();
  s.merges = merges_;
  s.last_step = last_step_;
  s.last_merge_applied_for = last_merge_applied_for_;
  if (residual_.defined()) s.residual = residual_.clone();
  if (sync_residual_.defined()) s.sync_residual = sync_residual_.clone();
  if (merged_.valid()) {
    const Merged merged = merged_.get();
    merged_ = ready(merged);
    s.started_at = started_at_;
    s.merging = merging_;
    s.merge_bytes = static_cast<std::int64_t>(comm_.bytes_sent() - seen_bytes_ + restored_merge_bytes_);
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
  // A checkpoint without a residual (format 5, an fp32 wire's, none merged yet): none owed.
  residual_ = state.residual.defined() ? state.residual.clone() : at::Tensor();
  sync_residual_ = state.sync_residual.defined() ? state.sync_residual.clone() : at::Tensor();
  merges_ = state.merges;
  last_step_ = state.last_step;
  last_merge_applied_for_ = state.last_merge_applied_for;
  merged_ = std::future<Merged>();
  seen_bytes_ = comm_.bytes_sent();
  restored_merge_bytes_ = state.started_at >= 0 ? static_cast<std::uint64_t>(state.merge_bytes) : 0;
  started_at_ = state.started_at;
  merging_ = state.merging;
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

void DdapReducer::start(std::int64_t step, FlatRange range, bool overlapped) {
  started_at_ = step;
  merging_ = range;
  const at::Tensor theta = flatten_parameters(model_);
  theta_at_start_ = range == fragments_.whole() ? theta : theta.narrow(0, range.begin, range.size()).clone();
  // Whole-model merges only (the config refuses merge_moments with fragments).
  moments_at_start_ =
      parallel_.merge_moments ? flatten(moments_in_order(optim::adam_state(optimizer_, model_))) : at::Tensor();
  // This rank's outer gradient, with what its last merge of these values
  // left unsent; the wire's residual is owed to their next merge.
  at::Tensor delta = theta_at_start_ - anchor_.narrow(0, range.begin, range.size());
  if (residual_.defined()) delta += residual_.narrow(0, range.begin, range.size());
  MergeWire::Outgoing outgoing = wire_->encode(delta);
  if (outgoing.residual.defined()) {
    if (!residual_.defined()) residual_ = torch::zeros_like(anchor_);  // the other fragments owe nothing yet
    residual_.narrow(0, range.begin, range.size()).copy_(outgoing.residual);
  }
  auto merge = [payload = std::move(outgoing.payload), numel = range.size(), moments = moments_at_start_,
                &wire = *wire_, &comm = comm_]() {
    Merged m{wire.merge(payload, numel, comm), at::Tensor()};
    if (moments.defined()) {
      m.moments = moments.clone();
      comm.allreduce(m.moments.data_ptr(), static_cast<std::size_t>(m.moments.numel()), comm::DType::kFloat32,
                     comm::ReduceOp::kAverage);
    }
    return m;
  };
  if (overlapped) {
    merged_ = std::async(std::launch::async, std::move(merge));
  } else {
    merged_ = ready(merge());
  }
}

void DdapReducer::apply() {
  const Merged merged = merged_.get();
  // The merged values only (a fragment's, or all): the anchor, diloco's
  // momentum, and the replica, which becomes the anchor there (blocking) or
  // keeps what it learnt since the merge started (overlapped).
  step_anchor(anchor_, merging_, merged.delta, rule_, momentum_);
  at::Tensor theta = flatten_parameters(model_);
  rebase_on_anchor(theta, anchor_, merging_, theta_at_start_);
  unflatten_into_parameters(theta, model_);
  if (merged.moments.defined()) {
    const optim::AdamState live = optim::adam_state(optimizer_, model_);
    const std::vector<at::Tensor> tensors = moments_in_order(live);
    at::Tensor moments = merged.moments + (flatten(tensors) - moments_at_start_);
    std::int64_t first = 0;
    for (const auto& t : live.exp_avg) first += t.numel();
    moments.narrow(0, first, moments.numel() - first).clamp_min_(0);
    unflatten_into(moments, tensors);
  }
  theta_at_start_ = at::Tensor();
  moments_at_start_ = at::Tensor();
  if (merging_ == fragments_.whole()) last_merge_applied_for_ = started_at_;
  ++merges_;
  count_bytes();
}

}  // namespace hpctrain::reduce
