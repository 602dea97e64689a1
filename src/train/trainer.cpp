#include "train/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/optim/adamw.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "runtime/allocator.h"
#include "runtime/matmul_peak.h"
#include "runtime/memory_usage.h"
#include "support/text.h"
#include "train/autocast.h"
#include "train/generate.h"
#include "train/run_setup.h"
#include "train/throughput.h"
#include "train/weights.h"

namespace hpctrain::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

at::Generator cpu_generator() { return at::detail::getDefaultCPUGenerator(); }

}  // namespace

Trainer::Trainer(const config::Experiment& experiment, comm::World& world, const cluster::Environment& env)
    : Trainer(experiment, world, env, TrainingSource{}) {}

Trainer::Trainer(const config::Experiment& e, comm::World& world, const cluster::Environment& env,
                 TrainingSource source)
    : experiment_(e),
      world_(world),
      env_(env),
      log_(e.job.run_dir, world.rank()),
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
  log_.line(
      fmt::format("rank {}: {} compute threads (LibTorch and OpenBLAS) from {}", rank, plan.threads, plan.source));
  log_.detail(fmt::format("rank {}: heap: {}", rank, runtime::keep_freed_memory(env_)));
  const torch::Device device = choose_device(e.training.device, world_);
  if (device.is_cuda()) log_.line(fmt::format("rank {}: {}", rank, make_gpu_deterministic()));
  if (const std::string idle = idle_gpus_warning(e.training.device, device);
      !idle.empty() && world_.local_rank() == 0) {
    log_.line(fmt::format("rank {}: {}", rank, idle));
  }

  batch_ = batch_geometry(e, rank, world_.size());
  tokens_per_step_ = static_cast<double>(batch_.global * static_cast<std::uint64_t>(e.data.seq_len));

  if (!data_) {
    ensure_prepared(e, world_, log_);
    const std::filesystem::path dir = e.data.dir;
    if (e.data.has_tokenizer()) tokenizer_.emplace(data::Tokenizer::load(dir / "tokenizer.model"));
    train_set_.emplace(dir, "train", static_cast<std::size_t>(e.data.seq_len), tokenizer_ ? tokenizer_->hash() : "");
    evaluator_.emplace(e, tokenizer_ ? &*tokenizer_ : nullptr);
    vocab_size_ = train_set_->vocab_size();
  }

  // Model and optimizer: the same seed on every rank; the reducer makes rank 0's weights everyone's.
  torch::manual_seed(e.job.seed);
  model_ = model::make_model(e.model, vocab_size_);
  model_->to(device);
  if (!data_) {
    data_ =
        std::make_unique<TokenData>(*train_set_, batch_.global, rank, world_.size(), e.job.seed, model_->objective(),
                                    data::make_mlm_masking(e.data, e.job.seed, tokenizer_ ? &*tokenizer_ : nullptr));
  }
  optimizer_ = optim::make_optimizer(*model_, e.optimizer);
  reducer_ = reduce::make_reducer(e.parallel, *model_, *optimizer_, world_);
  log_.line(fmt::format("rank {}: device {}, {} reducer over {}", rank, device.str(),
                        config::name_of(e.parallel.reducer), reducer_->backend()));
  log_.line(reducer_->describe());

  if (e.training.ema_decay > 0) ema_.emplace(e.training.ema_decay, reducer_->evaluation_weights());
  if (e.eval.retired_batches) {
    log_.line(fmt::format(
        "eval.batches is no longer read: evaluations read eval.samples = {} validation sequences spread over the "
        "whole split (all ranks together), and the final one the whole split (eval.final)",
        e.eval.samples));
  }

  checkpointer_ = std::make_unique<Checkpointer>(e, world_, log_);
  if (const auto from = checkpointer_->choose_resume()) resume_from(*from);
  preemption_ = std::make_unique<PreemptionSignal>(e.checkpoint.signal);
  control_comm_ =
      std::make_unique<comm::MpiCommunicator>(world_.mpi_comm(), world_.collective_timeout(), world_.wait_strategy());
  agreement_ = std::make_unique<StepAgreement>(*control_comm_);
  log_.detail(fmt::format("rank {}: pid {}; SIG{}{} asks for a checkpoint and exit {}", rank, getpid(),
                          preemption_->name(), preemption_->name() == "TERM" ? "" : " (or SIGTERM)",
                          config::kRequeueExitCode));

  flops_per_token_ = model_->flops_per_token(e.data.seq_len);
  // On a CPU the fp32 peak whatever the precision (autocast's bf16 matmuls are
  // not faster there); on a GPU the peak of the precision the matmuls run in.
  const bool bf16_peak = device.is_cuda() && e.training.precision == config::Precision::kBf16;
  peak_ = runtime::measure_matmul_peak(device, bf16_peak ? torch::kBFloat16 : torch::kFloat32);
  log_.line(fmt::format(
      "model {}: {:.2f}M parameters; {} steps of {} samples x {} tokens ({}), {} precision; {:.2f} GFLOP/s {} "
      "matmul peak per rank, measured now (MFU is against it, not a datasheet's peak)",
      config::name_of(e.model.kind), static_cast<double>(model_->parameter_count()) / 1e6, e.training.steps,
      batch_.global, e.data.seq_len, batch_.describe(), config::name_of(e.training.precision), peak_ / 1e9,
      bf16_peak ? "bf16" : "fp32"));
  window_.start_timing(step_);
  train_start_ = Clock::now();
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
  reducer_->load(checkpoint);
  data_->load(checkpoint);
  window_.load(checkpoint);
  checkpointer_->load(checkpoint);
  if (ema_ && !ema_->load(checkpoint, *model_)) {
    ema_.emplace(ema_->decay(), reducer_->evaluation_weights());
    log_.line(fmt::format("{} holds no weight average: training.ema_decay starts it from the resumed weights",
                          checkpoint.name()));
  }
  {
    at::Generator generator = cpu_generator();
    const std::lock_guard lock(generator.mutex());
    const torch::Tensor now = generator.get_state();
    generator.set_state(checkpoint.tensor("rng/torch_cpu", now.numel(), now.scalar_type()));
  }
  step_ = start_step_ = checkpoint.info().step;
  log_.line(fmt::format("resumed from {} at step {} (epoch {}, batch {} of it)", path.string(), step_,
                        checkpoint.integer("epoch", 0), checkpoint.integer("sampler_step", 0)));
  warn_if_schedule_jumps(checkpoint);
  // What it resumed with, to compare with the run or the file it came from.
  log_.line(fmt::format("weights sha256 at resume: {}", weights_sha256(*model_)));
  if (const std::int64_t ranks = checkpoint.info().world_size; ranks != world_.size()) {
    log_.line(fmt::format("the checkpoint was written by {} rank{}, this run has {}{}", ranks, ranks == 1 ? "" : "s",
                          world_.size(),
                          checkpoint.info().reducer == "ddap"
                              ? ": every rank starts from the merge of its replicas, with their mean AdamW moments"
                              : ""));
  }
  if (const auto dropped = log_.resume_at(step_); dropped > 0) {
    log_.line(fmt::format("metrics.jsonl: {} record(s) after step {} dropped (the steps run again)", dropped, step_));
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
  log_.line(fmt::format(
      "warning: the learning-rate schedule differs from the checkpoint's (training.steps {} -> {}, optimizer.lr {:g} "
      "-> {:g}): step {} takes lr {:.4g}, where the checkpoint's schedule gives {:.4g}. To continue smoothly, keep "
      "training.steps, [schedule] and optimizer.lr as the run had them",
      then.training.steps, experiment_.training.steps, then.optimizer.lr, experiment_.optimizer.lr, next, is, was));
}

TrainSummary Trainer::run() {
  const std::int64_t steps = experiment_.training.steps;
  if (step_ >= steps) {
    log_.line(fmt::format("nothing to train: the checkpoint is at step {} of {}", step_, steps));
    return finish(false);
  }
  while (step_ < steps) {
    const StepResult result = train_step();
    const bool last = step_ == steps;
    const bool stop = agree_to_stop(result, last);
    checkpointer_->poll();
    if (experiment_.logging.should_log(step_, last)) log_window(result);
    if (last) {
      finish_reducer();
      trained_seconds_ = seconds_since(train_start_) - eval_seconds_;  // before the final evaluation and checkpoint
    }
    bool best = false;
    // SIGTERM leaves KillWait seconds before SIGKILL: the checkpoint goes first.
    // Agreed, not this rank's own signal: evaluation is collective.
    const bool hurry = stop && terminated_;
    if (evaluator_ && experiment_.eval.should_eval(step_, last) && !hurry) {
      last_eval_ = evaluate(last);
      best = checkpointer_->note_evaluation(step_, last_eval_->sample.loss);
    }
    if (last) {
      report_test();
      print_sample();
    }
    if (stop) log_.line(fmt::format("step {}: {}; writing a checkpoint and stopping", step_, stop_reason()));
    if (stop || best || experiment_.checkpoint.should_checkpoint(step_, last)) checkpoint(stop || last);
    if (stop && preemption_->raised()) report_stop_time();
    if (stop || last) return finish(stop);
  }
  return finish(false);
}

StepResult Trainer::train_step() {
  const config::Experiment& e = experiment_;
  StepResult result;
  result.lr = schedule_.at(step_ + 1);
  optim::set_learning_rate(*optimizer_, result.lr);
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
  result.clip = reducer_->optimizer_step(*optimizer_, e.optimizer.grad_clip);
  ++step_;
  reducer_->after_optimizer_step(step_, data_->epoch_ended());
  if (ema_) ema_->update(reducer_->evaluation_weights());
  return result;
}

bool Trainer::agree_to_stop(const StepResult& result, bool last) {
  const bool signalled = preemption_->raised();
  if (signalled && !signal_noted_) {
    log_.line(
        fmt::format("rank {}: SIG{} received by the end of step {}", world_.rank(), preemption_->received(), step_));
    signal_noted_ = true;
  }
  // The ranks' losses are averaged there; weighted, uneven shares give the global batch's mean.
  agreement_->post(step_, {result.loss * batch_.loss_weight(), signalled, preemption_->terminated()});
  const config::Experiment& e = experiment_;
  const bool stop_asked = e.training.stop_after > 0 && step_ == e.training.stop_after && !last;
  // Agreements settle one step late, except where this step's result is needed now.
  const bool needed = last || stop_asked || e.logging.should_log(step_, last) || e.eval.should_eval(step_, last) ||
                      e.checkpoint.should_checkpoint(step_, last);
  for (const AgreedStep& agreed : agreement_->settle_through(needed ? step_ : step_ - 1)) {
    window_.add_loss(agreed.mean_loss);
    if (agreed.stop_requested && !last) stop_requested_ = true;
    if (agreed.terminated && !last) terminated_ = true;
  }
  return stop_requested_ || stop_asked;
}

void Trainer::log_window(const StepResult& result) {
  const config::Experiment& e = experiment_;
  const double tokens_per_s = tokens_per_second(
      static_cast<double>(window_.steps_since_start(step_)) * tokens_per_step_, window_.training_seconds());
  const double mfu = model_flops_utilization(tokens_per_s, flops_per_token_, peak_, world_.size());
  const double eta = seconds_since(train_start_) / static_cast<double>(step_ - start_step_) *
                     static_cast<double>(e.training.steps - step_);
  log_.record("train", step_,
              {{"loss", window_.mean_loss()},
               {"lr", result.lr},
               {"grad_norm", result.clip.norm},
               {"tokens_per_s", tokens_per_s},
               {"mfu", mfu},
               {"steps_total", Metric::count(e.training.steps)},  // for `jobgen status`: step N of total
               {"eta_s", eta}});
  log_.progress(fmt::format("step {:>6}/{} | loss {:.4f} | lr {:.3e} | {:.0f} tok/s | MFU {:.1f}% | ETA {}", step_,
                            e.training.steps, window_.mean_loss(), result.lr, tokens_per_s, 100 * mfu,
                            support::format_duration(eta)));
  window_.restart(step_);
}

Evaluation Trainer::evaluate(bool last) {
  const auto start = Clock::now();
  auto measure = [&] {
    return last ? evaluator_->final(*model_, world_.comm()) : evaluator_->periodic(*model_, world_.comm());
  };
  Evaluation raw;
  reducer_->with_evaluation_weights([&] { raw = measure(); });
  std::optional<Evaluation> average;
  if (ema_) reducer_->with_weights(ema_->weights(), [&] { average = measure(); });
  const double train_s = seconds_since(train_start_) - eval_seconds_;
  const bool masked = model_->objective() == model::Objective::kMasked;

  // One record and line for the sample (every evaluation: the curve), one
  // more for the whole split when this evaluation read it.
  auto report = [&](const std::string& kind, const EvalResult& r, const EvalResult* ema) {
    Fields fields = {{"eval_loss", r.loss},
                     {"eval_perplexity", r.perplexity},
                     {"eval_tokens", Metric::count(r.tokens)},
                     {"eval_sequences", Metric::count(r.sequences)},
                     {"eval_full", Metric::count(r.full() ? 1 : 0)},
                     {"train_s", train_s}};
    std::string extra;
    if (masked) {
      fields.emplace_back("masked_accuracy", r.masked_accuracy);
      extra = fmt::format(", masked-token accuracy {:.2f}%", 100 * r.masked_accuracy);
    }
    if (ema != nullptr) {
      fields.emplace_back("ema_eval_loss", ema->loss);
      fields.emplace_back("ema_eval_perplexity", ema->perplexity);
      extra += fmt::format(" | EMA weights: eval loss {:.4f}, perplexity {:.2f}", ema->loss, ema->perplexity);
    }
    log_.record(kind, step_, fields);
    log_.line(fmt::format("step {:>6} | eval loss {:.4f} | perplexity {:.2f}{} | {}", step_, r.loss, r.perplexity,
                          extra, r.coverage()));
  };
  report("eval", raw.sample, average ? &average->sample : nullptr);
  if (raw.full) report("eval_full", *raw.full, average && average->full ? &*average->full : nullptr);

  const double seconds = seconds_since(start);
  eval_seconds_ += seconds;
  window_.exclude(seconds);
  return raw;
}

void Trainer::report_test() {
  if (!evaluator_) return;
  const auto start = Clock::now();
  reducer_->with_evaluation_weights([&] { test_eval_ = evaluator_->test(*model_, world_.comm()); });
  if (test_eval_) {
    log_.record("test", step_,
                {{"test_loss", test_eval_->loss},
                 {"test_perplexity", test_eval_->perplexity},
                 {"test_tokens", Metric::count(test_eval_->tokens)},
                 {"test_sequences", Metric::count(test_eval_->sequences)}});
  }
  const double seconds = seconds_since(start);
  eval_seconds_ += seconds;
  window_.exclude(seconds);
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
        reducer_->save(s);  // the model, the optimizer, the replicas
        data_->save(s);
        window_.save(s);
        checkpointer_->save(s);
        // What follows is the same on every rank: sharded, rank 0's shard holds it.
        const bool writes_shared = !sharded || world_.rank() == 0;
        if (ema_ && writes_shared) ema_->save(s, *model_);
        s.reals.emplace_back("lr", schedule_.at(step_));  // for readers: the step is the schedule's whole state
        if (writes_shared) {
          at::Generator generator = cpu_generator();
          const std::lock_guard lock(generator.mutex());
          s.tensors.emplace_back("rng/torch_cpu", generator.get_state().clone());
        }
        return s;
      },
      wait);
}

void Trainer::finish_reducer() {
  reducer_->finish();
  if (const std::string summary = reducer_->summary(); !summary.empty()) log_.line(summary);
}

void Trainer::print_sample() {
  const config::Experiment& e = experiment_;
  if (model_->objective() != model::Objective::kCausal || e.eval.sample_tokens <= 0 || world_.rank() != 0) return;
  if (!tokenizer_) {
    if (e.data.token_files()) log_.line("no sample: token files with no tokenizer (data.tokenizer) to write text with");
    return;
  }
  const std::string sample = generate(*model_, *tokenizer_, e.eval.prompt, e.eval.sample_tokens, e.eval.temperature,
                                      e.eval.top_k, e.model.max_seq_len, e.job.seed);
  log_.line(fmt::format("sample (temperature {}, top-k {}):\n{}\n", e.eval.temperature, e.eval.top_k, sample));
}

std::string Trainer::stop_reason() const {
  if (!stop_requested_) return fmt::format("training.stop_after = {}", experiment_.training.stop_after);
  // The agreed signal: a rank that saw none itself stops because another did.
  return terminated_ ? "SIGTERM received (SLURM ends the job: preemption, time limit or scancel)"
                     : fmt::format("SIG{} received (preemption)", preemption_->name());
}

void Trainer::report_stop_time() {
  const auto at = preemption_->received_at();
  if (!at) return;
  const double seconds = std::chrono::duration<double>(Clock::now() - *at).count();
  log_.line(fmt::format("checkpoint of step {} on disk {:.2f} s after SIG{}{}", step_, seconds, preemption_->received(),
                        preemption_->terminated()
                            ? "; SLURM sends SIGKILL KillWait s after SIGTERM (scontrol show config; 30 s by default)"
                            : ""));
}

TrainSummary Trainer::finish(bool stopped) {
  (void)agreement_->settle_through(step_);
  TrainSummary summary;
  summary.steps = step_;
  summary.preempted = stopped && stop_requested_;
  summary.weights_sha256 = weights_sha256(*model_);
  if (stopped) {
    world_.comm().barrier();  // nobody leaves before the checkpoint is on disk
    log_.line(fmt::format("weights sha256 at step {}: {}", step_, summary.weights_sha256));
    return summary;
  }
  const double train_seconds = trained_seconds_;
  const double speed = tokens_per_second(static_cast<double>(step_ - start_step_) * tokens_per_step_, train_seconds);
  if (last_eval_) summary.final_eval = last_eval_->headline();
  summary.test_eval = test_eval_;

  // Timing over ranks.
  const auto mine = static_cast<std::int64_t>(seconds_since(wall_start_) * 1e6);
  std::vector<std::int64_t> walls(static_cast<std::size_t>(world_.size()));
  world_.comm().allgather(&mine, walls.data(), 1, comm::DType::kInt64);
  const auto [min_it, max_it] = std::minmax_element(walls.begin(), walls.end());
  double sum = 0;
  for (auto w : walls) sum += static_cast<double>(w);
  log_.line(fmt::format(
      "wall time per rank: max {:.2f} s, min {:.2f} s, avg {:.2f} s; training {:.2f} s (evaluations excluded), "
      "{:.0f} tokens/s over {} rank{}",
      static_cast<double>(*max_it) / 1e6, static_cast<double>(*min_it) / 1e6,
      sum / static_cast<double>(world_.size()) / 1e6, train_seconds, speed, world_.size(),
      world_.size() == 1 ? "" : "s"));
  Fields fields = {
      {"tokens_per_s", speed}, {"train_s", train_seconds}, {"wall_max_s", static_cast<double>(*max_it) / 1e6}};
  // Peak resident memory over ranks: what a per-node memory limit sees. Only
  // logged: metrics.jsonl stays the same for the same seed and world size.
  const std::int64_t my_peak = runtime::peak_resident_bytes();
  std::vector<std::int64_t> peaks(static_cast<std::size_t>(world_.size()));
  world_.comm().allgather(&my_peak, peaks.data(), 1, comm::DType::kInt64);
  if (const auto [least, most] = std::minmax_element(peaks.begin(), peaks.end()); *least >= 0) {
    constexpr double kMiB = 1 << 20;
    log_.line(fmt::format("peak resident memory per rank (VmHWM): max {:.0f} MiB (rank {}), min {:.0f} MiB (rank {})",
                          static_cast<double>(*most) / kMiB, most - peaks.begin(), static_cast<double>(*least) / kMiB,
                          least - peaks.begin()));
  }
  if (summary.final_eval) {
    const EvalResult& v = *summary.final_eval;
    fields.insert(fields.begin(), {{"eval_loss", v.loss},
                                   {"eval_tokens", Metric::count(v.tokens)},
                                   {"eval_full", Metric::count(v.full() ? 1 : 0)}});
    std::string baseline;
    if (train_set_) {
      // The bar any language model must clear: predicting each token by its
      // frequency alone, ignoring context.
      const double unigram = train_set_->unigram_entropy();
      baseline = fmt::format("; predicting tokens by their frequency alone scores {:.4f} nats (perplexity {:.2f})",
                             unigram, std::exp(unigram));
    }
    log_.line(fmt::format("validation loss {:.4f} nats (perplexity {:.2f}) over {}{}", v.loss, v.perplexity,
                          v.coverage(), baseline));
  }
  if (test_eval_) {
    fields.emplace_back("test_loss", test_eval_->loss);
    fields.emplace_back("test_tokens", Metric::count(test_eval_->tokens));
  }
  log_.record("summary", step_, fields);
  log_.line(fmt::format("final weights sha256: {}", summary.weights_sha256));
  // Last but for what to do next: the number no tuning has seen.
  if (test_eval_) {
    log_.line(
        fmt::format("test loss {:.4f} nats (perplexity {:.2f}) over {} (other files than the validation "
                    "split's: compare runs on one split, never a validation figure with a test one)",
                    test_eval_->loss, test_eval_->perplexity, test_eval_->coverage()));
  }
  const std::string run = experiment_.job.run_dir;
  // A sample needs text: a causal model and a tokenizer to write it with.
  const std::string generate = tokenizer_ && model_->objective() == model::Objective::kCausal
                                   ? fmt::format(
                                         "`hpctrain generate {}` samples again (--prompt, --temperature, "
                                         "--seed), ",
                                         run)
                                   : "";
  log_.line(
      fmt::format("next: {}`hpctrain eval {}` evaluates the checkpoint, `jobgen status {}` sums the run up; "
                  "docs/training.md explains this output",
                  generate, run, run));
  return summary;
}

}  // namespace hpctrain::train
