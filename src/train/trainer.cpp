#include "train/trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <optional>

#include "ckpt/hf_import.h"
#include "comm/consensus.h"
#include "runtime/allocator.h"
#include "runtime/matmul_peak.h"
#include "runtime/openblas_kernels.h"
#include "support/text.h"
#include "train/autocast.h"
#include "train/cpu_rng_state.h"
#include "train/generate.h"
#include "train/run_setup.h"
#include "train/weights.h"

namespace hpctrain::train {

Trainer::Trainer(const config::Experiment& experiment, comm::World& world, const cluster::Environment& env)
    : Trainer(experiment, world, env, TrainingSource{}) {}

Trainer::Trainer(const config::Experiment& e, comm::World& world, const cluster::Environment& env,
                 TrainingSource source)
    : experiment_(e),
      world_(world),
      env_(env),
      report_(e.job.run_dir, world.rank(), e.training.steps),
      data_(std::move(source.data)),
      vocab_size_(source.vocab_size),
      schedule_(e.schedule, e.optimizer.lr, e.training.steps) {
  set_up();
}

Trainer::~Trainer() = default;

void Trainer::set_up() {
  const config::Experiment& e = experiment_;
  const int rank = world_.rank();
  if (rank == 0) std::ofstream(std::filesystem::path(e.job.run_dir) / "config.toml") << e.resolved_toml;

  const runtime::ThreadPlan plan = thread_plan(e, env_, world_.local_size());
  runtime::apply_threads(plan.threads);
  report_.line(fmt::format("rank {}: {} compute threads (LibTorch and OpenBLAS) from {}; {}", rank, plan.threads,
                           plan.source, runtime::openblas_kernels_note(env_)));
  report_.detail(fmt::format("rank {}: heap: {}", rank, runtime::keep_freed_memory(env_)));
  const torch::Device device = choose_device(e.training.device, world_);
  if (device.is_cuda()) report_.line(fmt::format("rank {}: {}", rank, make_gpu_deterministic()));
  if (const std::string idle = idle_gpus_warning(e.training.device, device);
      !idle.empty() && world_.local_rank() == 0) {
    report_.line(fmt::format("rank {}: {}", rank, idle));
  }

  batch_ = batch_geometry(e, rank, world_.size());

  if (!data_) {
    ensure_prepared(e, world_, report_.log());
    const std::filesystem::path dir = e.data.dir;
    if (e.data.has_tokenizer()) tokenizer_.emplace(data::Tokenizer::load(dir / "tokenizer.model"));
    train_set_.emplace(dir, "train", static_cast<std::size_t>(e.data.seq_len), tokenizer_ ? tokenizer_->hash() : "");
    evaluator_.emplace(e, tokenizer_ ? &*tokenizer_ : nullptr);
    vocab_size_ = train_set_->vocab_size();
  }

  // Whether this run continues an earlier one, decided before the model is
  // built: a new run may start from a pretrained model's weights, which
  // every replica and the reducer's copies must start from too.
  checkpointer_ = std::make_unique<Checkpointer>(e, world_, report_.log());
  const std::optional<std::filesystem::path> resume = checkpointer_->choose_resume();

  // Model and optimizer: the same seed on every rank; the reducer makes rank 0's weights everyone's.
  torch::manual_seed(e.job.seed);
  // A base model's files against its config.json, from their headers, before
  // the model is built: a config asking for more than the files hold is
  // refused before its gigabytes are allocated.
  if (!resume && !e.model.init_from.empty()) ckpt::check_hf_weights(e.model.init_from, e.model, vocab_size_);
  model_ = model::make_model(e.model, vocab_size_);
  if (!resume && !e.model.init_from.empty()) {
    const ckpt::HfImport imported = ckpt::load_hf_weights(e.model.init_from, e.model, *model_);
    report_.line(fmt::format("rank {}: weights from {} ({} tensors, {})", rank, e.model.init_from, imported.tensors,
                             imported.dtypes));
  }
  model_->to(device);
  if (!data_) {
    data_ =
        std::make_unique<TokenData>(*train_set_, batch_.global, rank, world_.size(), e.job.seed, model_->objective(),
                                    data::make_mlm_masking(e.data, e.job.seed, tokenizer_ ? &*tokenizer_ : nullptr));
  }
  optimizer_ = optim::make_optimizer(*model_, e.optimizer);
  reducer_ = reduce::make_reducer(e.parallel, *model_, *optimizer_, world_);
  report_.line(fmt::format("rank {}: device {}, {} reducer over {}", rank, device.str(),
                           config::name_of(e.parallel.reducer), reducer_->backend()));
  report_.line(reducer_->describe());

  if (e.training.ema_decay > 0) weight_average_.emplace(e.training.ema_decay, reducer_->evaluation_weights());
  if (e.eval.retired_batches) {
    report_.line(fmt::format(
        "eval.batches is no longer read: evaluations read eval.samples = {} validation sequences spread over the "
        "whole split (all ranks together), and the final one the whole split (eval.final)",
        e.eval.samples));
  }

  register_checkpointed_state();
  if (resume) resume_from(*resume);
  preemption_ = std::make_unique<PreemptionSignal>(e.checkpoint.signal);
  control_comm_ =
      std::make_unique<comm::MpiCommunicator>(world_.mpi_comm(), world_.collective_timeout(), world_.wait_strategy());
  agreement_ = std::make_unique<StepAgreement>(*control_comm_);
  report_.detail(fmt::format("rank {}: pid {}; SIG{}{} asks for a checkpoint and exit {}", rank, getpid(),
                             preemption_->name(), preemption_->name() == "TERM" ? "" : " (or SIGTERM)",
                             config::kRequeueExitCode));

  flops_per_token_ = model_->flops_per_token(e.data.seq_len);
  // On a CPU the fp32 peak whatever the precision (autocast's bf16 matmuls are
  // not faster there); on a GPU the peak of the precision the matmuls run in.
  const bool bf16_peak = device.is_cuda() && e.training.precision == config::Precision::kBf16;
  peak_ = runtime::measure_matmul_peak(device, bf16_peak ? torch::kBFloat16 : torch::kFloat32);
  report_.line(fmt::format(
      "model {}: {:.2f}M parameters; {} steps of {} samples x {} tokens ({}), {} precision; {:.2f} GFLOP/s {} "
      "matmul peak per rank, measured now (MFU is against it, not a datasheet's peak)",
      config::name_of(e.model.kind), static_cast<double>(model_->parameter_count()) / 1e6, e.training.steps,
      batch_.global, e.data.seq_len, batch_.describe(), config::name_of(e.training.precision), peak_ / 1e9,
      bf16_peak ? "bf16" : "fp32"));
  report_.set_speed_basis(static_cast<double>(batch_.global * static_cast<std::uint64_t>(e.data.seq_len)),
                          flops_per_token_, peak_, world_.size());
  report_.start_training(step_, reducer_->bytes_sent());
}

void Trainer::register_checkpointed_state() {
  // Sharded, what is the same on every rank goes into rank 0's shard only.
  auto shared_part = [this](const ckpt::Snapshot& s) { return !s.sharded || world_.rank() == 0; };
  checkpointed_.push_back({[this](ckpt::Snapshot& s) { reducer_->save(s); },  // the model, the optimizer, the replicas
                           [this](const ckpt::CheckpointReader& c) { reducer_->load(c); }});
  checkpointed_.push_back({[this](ckpt::Snapshot& s) { data_->save(s); },  // the sampler's position
                           [this](const ckpt::CheckpointReader& c) { data_->load(c); }});
  checkpointed_.push_back(
      {[this](ckpt::Snapshot& s) { report_.save(s, reducer_->bytes_sent()); },  // the log window's losses
       [this](const ckpt::CheckpointReader& c) { report_.load(c); }});
  checkpointed_.push_back({[this](ckpt::Snapshot& s) { checkpointer_->save(s); },  // the best checkpoint
                           [this](const ckpt::CheckpointReader& c) { checkpointer_->load(c); }});
  if (weight_average_) {
    checkpointed_.push_back(
        {[this, shared_part](ckpt::Snapshot& s) {
           if (shared_part(s)) weight_average_->save(s, *model_);
         },
         [this](const ckpt::CheckpointReader& c) {
           if (weight_average_->load(c, *model_)) return;
           weight_average_.emplace(weight_average_->decay(), reducer_->evaluation_weights());
           report_.line(fmt::format("{} holds no weight average: training.ema_decay starts it from the resumed weights",
                                    c.name()));
         }});
  }
  // For readers only: the step is the schedule's whole state.
  checkpointed_.push_back({[this](ckpt::Snapshot& s) { s.reals.emplace_back("lr", schedule_.at(step_)); }, {}});
  checkpointed_.push_back({[shared_part](ckpt::Snapshot& s) {
                             if (shared_part(s)) save_cpu_rng(s);
                           },
                           load_cpu_rng});
}

void Trainer::resume_from(const std::filesystem::path& path) {
  const ckpt::CheckpointReader checkpoint(path);
  const std::string tokenizer_hash = tokenizer_ ? tokenizer_->hash() : std::string();
  auto diff = config_incompatibilities(experiment_, checkpoint, tokenizer_hash);
  for (auto& more : reducer_->incompatibilities(checkpoint.info())) diff.push_back(std::move(more));
  if (!diff.empty()) {
    throw ckpt::CheckpointError(fmt::format(
        "{} cannot continue this run ({} difference{}): {}. To start afresh here, set checkpoint.resume = \"never\" "
        "(the run's checkpoints are set aside, not deleted); to keep both, give this run another job.run_dir",
        checkpoint.name(), diff.size(), diff.size() == 1 ? "" : "s", fmt::join(diff, "; ")));
  }
  for (const CheckpointedState& state : checkpointed_) {
    if (state.load) state.load(checkpoint);
  }
  step_ = checkpoint.info().step;
  report_.line(fmt::format("resumed from {} at step {} (epoch {}, batch {} of it)", path.string(), step_,
                           checkpoint.integer("epoch", 0), checkpoint.integer("sampler_step", 0)));
  warn_if_schedule_jumps(checkpoint);
  // What it resumed with, to compare with the run or the file it came from.
  report_.line(fmt::format("weights sha256 at resume: {}", weights_sha256(*model_)));
  if (const std::int64_t ranks = checkpoint.info().world_size; ranks != world_.size()) {
    const std::string what = reducer_->on_other_world_size();
    report_.line(fmt::format("the checkpoint was written by {} rank{}, this run has {}{}{}", ranks,
                             ranks == 1 ? "" : "s", world_.size(), what.empty() ? "" : ": ", what));
  }
  if (const auto dropped = report_.resume_at(step_); dropped > 0) {
    report_.line(
        fmt::format("metrics.jsonl: {} record(s) after step {} dropped (the steps run again)", dropped, step_));
  }
}

void Trainer::warn_if_schedule_jumps(const ckpt::CheckpointReader& checkpoint) {
  // The schedule is a function of the step and of training.steps, [schedule]
  // and optimizer.lr, which a resume may change (docs/checkpoints.md): then
  // the learning rate does not go on where it was heading. Said once, with
  // the figures, so that a longer run is not mistaken for a smooth one.
  const config::Experiment then =
      config::load_experiment_text(checkpoint.info().config_toml, checkpoint.name() + " (stored config)");
  const optim::LrSchedule before(then.schedule, then.optimizer.lr, then.training.steps);
  const std::int64_t next = step_ + 1;
  const double was = before.at(next);
  const double is = schedule_.at(next);
  if (std::abs(is - was) <= 1e-9 * std::max(std::abs(was), std::abs(is))) return;
  report_.line(fmt::format(
      "warning: the learning-rate schedule differs from the checkpoint's (training.steps {} -> {}, optimizer.lr {:g} "
      "-> {:g}): step {} takes lr {:.4g}, where the checkpoint's schedule gives {:.4g}. To continue smoothly, keep "
      "training.steps, [schedule] and optimizer.lr as the run had them",
      then.training.steps, experiment_.training.steps, then.optimizer.lr, experiment_.optimizer.lr, next, is, was));
}

TrainSummary Trainer::run() {
  const std::int64_t steps = experiment_.training.steps;
  if (step_ >= steps) {
    report_.line(fmt::format("nothing to train: the checkpoint is at step {} of {}", step_, steps));
    return finish(false);
  }
  // The first steps' samples, before any is trained: a failure here has
  // nothing to checkpoint, and is every rank's error now.
  read_ahead();
  comm::agree_or_throw(world_.comm(), read_ahead_failure_);
  while (step_ < steps) {
    const StepResult result = train_step();
    const StepPlan plan = plan_step(experiment_, step_);
    const bool stop = agree_to_stop(result, plan);
    checkpointer_->poll();
    if (plan.record) report_.train_record(step_, result.lr, result.clip, reducer_->bytes_sent());
    if (plan.last) finish_training();  // before the final evaluation and checkpoint
    // SIGTERM leaves KillWait seconds before SIGKILL: the checkpoint goes first.
    // Agreed, not this rank's own signal: evaluation is collective.
    const bool hurry = stop && (terminated_ || unreadable_);
    const bool best = evaluator_ && plan.evaluate && !hurry && evaluate(plan.last);
    if (plan.last) {
      report_test();
      print_sample();
    }
    if (stop) report_.line(fmt::format("step {}: {}; writing a checkpoint and stopping", step_, stop_reason()));
    if (stop || best || plan.checkpoint) checkpoint(stop || plan.last);
    if (unreadable_) fail_on_unreadable_data();
    if (stop && preemption_->raised()) report_stop_time();
    if (stop || plan.last) return finish(stop);
  }
  return finish(false);
}

StepResult Trainer::train_step() {
  const config::Experiment& e = experiment_;
  StepResult result;
  result.lr = schedule_.at(step_ + 1);
  data_->begin_step();
  reducer_->begin_step();
  const torch::Device device = model_->parameters().front().device();
  const bool bf16 = e.training.precision == config::Precision::kBf16;
  // Each micro-batch's mean loss is divided so that the gradients average
  // the samples they stand for: the global batch where the reducer sums
  // over the ranks, else this rank's share (batch_geometry.h).
  const bool summed = reducer_->gradients_summed_over_ranks();
  std::size_t offset = 0;
  for (std::size_t m = 0; m < batch_.micro.size(); ++m) {
    reducer_->micro_step(m + 1 == batch_.micro.size());
    const Batch batch = data_->micro_batch(offset, batch_.micro[m]);
    offset += batch_.micro[m];
    torch::Tensor loss;
    {
      const AutocastGuard autocast(bf16, device.is_cuda());
      loss = model_->loss(batch.inputs.to(device), batch.targets.to(device));
    }
    if (batch_.stands_in()) {
      (loss * 0.0).backward();  // joins the gradient sum, adding nothing
      continue;
    }
    (loss / batch_.loss_divisor(m, summed)).backward();
    result.loss += loss.item<double>() / batch_.loss_divisor(m, false);
  }
  reducer_->end_backward();
  result.clip = reducer_->optimizer_step(result.lr, e.optimizer.grad_clip);
  ++step_;
  reducer_->after_optimizer_step(step_, data_->epoch_ended());
  read_ahead();
  if (weight_average_) weight_average_->update(reducer_->evaluation_weights());
  return result;
}

bool Trainer::agree_to_stop(const StepResult& result, const StepPlan& plan) {
  const bool signalled = preemption_->raised();
  if (signalled && !signal_noted_) {
    report_.line(
        fmt::format("rank {}: SIG{} received by the end of step {}", world_.rank(), preemption_->received(), step_));
    signal_noted_ = true;
  }
  // The ranks' losses are averaged there; weighted, uneven shares give the global batch's mean.
  agreement_->post(step_, {result.loss * batch_.loss_weight(), signalled, preemption_->terminated(),
                           read_ahead_failure_.has_value()});
  // Agreements settle one step late, except where this step's result is needed now.
  for (const AgreedStep& agreed : agreement_->settle_through(plan.needs_agreement_now() ? step_ : step_ - 1)) {
    // Every rank settles the same agreed loss, so every rank stops here, no
    // rank inside a collective: an agreed failure, after which MPI is
    // finalized and mpiexec reports the exit status. A step's loss settles
    // before its checkpoint is written (step_plan.h), so no checkpoint holds
    // the weights that produced it.
    if (!std::isfinite(agreed.mean_loss)) {
      throw comm::AgreedError(fmt::format(
          "step {}: the training loss is {} (the mean over the ranks): the weights are no longer finite, so the run "
          "stops here and writes no checkpoint after step {}; lower optimizer.lr, set optimizer.grad_clip, or look "
          "at the data and the weights it started from",
          agreed.step, agreed.mean_loss, agreed.step - 1));
    }
    report_.add_loss(agreed.mean_loss);
    if (agreed.stop_requested && !plan.last) stop_requested_ = true;
    if (agreed.terminated && !plan.last) terminated_ = true;
    if (agreed.unreadable && !plan.last) unreadable_ = true;
  }
  return stop_requested_ || plan.stop_asked || unreadable_;
}

void Trainer::read_ahead() {
  if (read_ahead_failure_) return;  // reported already; the run is stopping
  const auto steps = static_cast<std::size_t>(std::min<std::int64_t>(2, experiment_.training.steps - step_));
  read_ahead_failure_ = data_->read_ahead(steps);
}

void Trainer::fail_on_unreadable_data() {
  const std::string resume = fmt::format(
      "; the run stopped after step {} with its checkpoint written: restore the data set (or prepare it again with the "
      "same tokenizer) and run the same command to resume",
      step_);
  try {
    comm::agree_or_throw(world_.comm(), read_ahead_failure_);
  } catch (const comm::AgreedError& e) {
    throw comm::AgreedError(e.what() + resume);
  }
  // Unreachable: the rank that voted holds its failure.
  throw comm::AgreedError("a rank could not read the samples of a coming step" + resume);
}

bool Trainer::evaluate(bool last) {
  const auto start = RunReport::Clock::now();
  auto measure = [&] {
    return last ? evaluator_->final(*model_, world_.comm()) : evaluator_->periodic(*model_, world_.comm());
  };
  Evaluation raw;
  reducer_->with_evaluation_weights([&] { raw = measure(); });
  std::optional<Evaluation> average;
  if (weight_average_) reducer_->with_weights(weight_average_->weights(), [&] { average = measure(); });
  report_.evaluation(step_, raw, average, model_->objective() == model::Objective::kMasked, start);
  last_eval_ = raw;
  return checkpointer_->note_evaluation(step_, raw.sample.loss, raw.sample.tokens);
}

void Trainer::report_test() {
  if (!evaluator_) return;
  const auto start = RunReport::Clock::now();
  reducer_->with_evaluation_weights([&] { test_eval_ = evaluator_->test(*model_, world_.comm()); });
  report_.test(step_, test_eval_, start);
}

void Trainer::checkpoint(bool wait) {
  const bool sharded = experiment_.checkpoint.sharded;
  // Sharded, every rank builds its part where the checkpointer agrees on the
  // outcome (no collective inside); one file, the reducer's save gathers.
  checkpointer_->write(
      step_,
      [&] {
        ckpt::Snapshot s;
        s.info.step = step_;
        s.info.world_size = world_.size();
        s.info.reducer = config::name_of(experiment_.parallel.reducer);
        s.info.config_toml = experiment_.resolved_toml;
        s.info.tokenizer_sha256 = tokenizer_ ? tokenizer_->hash() : std::string();
        s.sharded = sharded;
        for (const CheckpointedState& state : checkpointed_) state.save(s);
        return s;
      },
      wait);
}

void Trainer::finish_training() {
  reducer_->finish();
  if (const std::string summary = reducer_->summary(); !summary.empty()) report_.line(summary);
  report_.training_done();
}

void Trainer::print_sample() {
  const config::Experiment& e = experiment_;
  if (model_->objective() != model::Objective::kCausal || e.eval.sample_tokens <= 0 || world_.rank() != 0) return;
  if (!tokenizer_) {
    if (e.data.token_files())
      report_.line("no sample: token files with no tokenizer (data.tokenizer) to write text with");
    return;
  }
  const std::string sample = generate(*model_, *tokenizer_, e.eval.prompt, e.eval.sample_tokens, e.eval.temperature,
                                      e.eval.top_k, e.model.max_seq_len, e.job.seed);
  // The tokenizer's pieces are the data's bytes: control characters shown
  // escaped, so a sample cannot drive the terminal that reads the log.
  report_.line(fmt::format("sample (temperature {}, top-k {}):\n{}\n", e.eval.temperature, e.eval.top_k,
                           support::printable_lines(sample)));
}

std::string Trainer::stop_reason() const {
  if (unreadable_) return "a rank cannot read its samples of a coming step (the error follows)";
  if (!stop_requested_) return fmt::format("training.stop_after = {}", experiment_.training.stop_after);
  // The agreed signal: a rank that saw none itself stops because another did.
  return terminated_ ? "SIGTERM received (SLURM ends the job: preemption, time limit or scancel)"
                     : fmt::format("SIG{} received (preemption)", preemption_->name());
}

void Trainer::report_stop_time() {
  const auto at = preemption_->received_at();
  if (!at) return;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - *at).count();
  report_.line(
      fmt::format("checkpoint of step {} on disk {:.2f} s after SIG{}{}", step_, seconds, preemption_->received(),
                  preemption_->terminated()
                      ? "; SLURM sends SIGKILL KillWait s after SIGTERM (scontrol show config; 30 s by default)"
                      : ""));
}

TrainSummary Trainer::finish(bool stopped) {
  (void)agreement_->settle_through(step_);
  TrainSummary summary;
  summary.steps = step_;
  summary.bytes_sent = reducer_->bytes_sent();
  summary.preempted = stopped && stop_requested_;
  summary.weights_sha256 = weights_sha256(*model_);
  if (stopped) {
    world_.comm().barrier();  // nobody leaves before the checkpoint is on disk
    report_.line(fmt::format("weights sha256 at step {}: {}", step_, summary.weights_sha256));
    return summary;
  }
  if (last_eval_) summary.final_eval = last_eval_->headline();
  summary.test_eval = test_eval_;
  std::optional<double> unigram;
  if (train_set_ && summary.final_eval) unigram = train_set_->unigram_entropy();
  // A sample needs text: a causal model and a tokenizer to write it with.
  const bool can_sample = tokenizer_ && model_->objective() == model::Objective::kCausal;
  report_.summary(summary, unigram, can_sample, world_.comm(), experiment_.job.run_dir);
  return summary;
}

}  // namespace hpctrain::train
