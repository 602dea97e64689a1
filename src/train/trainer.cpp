#include "train/trainer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>

#include "ckpt/checkpoint.h"
#include "ckpt/checkpoint_files.h"
#include "ckpt/checkpoint_writer.h"
#include "ckpt/verify.h"
#include "comm/consensus.h"
#include "comm/mpi_communicator.h"
#ifdef HPCTRAIN_HAVE_NCCL
#include "comm/nccl_communicator.h"
#endif
#include "data/prepare.h"
#include "data/sampler.h"
#include "data/token_dataset.h"
#include "data/tokenizer.h"
#include "model/language_model.h"
#include "reduce/ddap_reducer.h"
#include "reduce/ddp_reducer.h"
#include "reduce/replica_check.h"
#include "runtime/allocator.h"
#include "runtime/sgemm_peak.h"
#include "runtime/threads.h"
#include "train/autocast.h"
#include "train/batches.h"
#include "train/generate.h"
#include "train/grad_clip.h"
#include "train/lr_schedule.h"
#include "train/metrics.h"
#include "train/optimizer.h"
#include "train/preemption.h"
#include "train/step_agreement.h"
#include "train/train_state.h"
#include "train/weights.h"

namespace hpctrain::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(seconds);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, (s / 60) % 60) : fmt::format("{}m{:02}s", s / 60, s % 60);
}

// The data set, prepared on rank 0 first when it does not exist yet.
void ensure_prepared(const config::Experiment& e, comm::World& world, RunLog& log) {
  if (world.rank() == 0 && !std::filesystem::exists(std::filesystem::path(e.data.dir) / "meta.json")) {
    log.line(fmt::format("data set {} not prepared yet: preparing it (hpctrain prepare does this alone)", e.data.dir));
    const auto result = data::prepare(e, stdout);
    data::print_stats(result, stdout);
  }
  world.comm().barrier();
}

// training.device: "cpu", "cuda" (the GPU of this rank's local rank), or "auto".
torch::Device choose_device(const std::string& requested, int local_rank) {
  const bool gpus = torch::cuda::is_available();
  if (requested == "cuda" && !gpus) {
    throw std::runtime_error(
        "training.device = \"cuda\", but this hpctrain runs on a CPU-only LibTorch (or sees no GPU); build against "
        "a CUDA LibTorch via CMAKE_PREFIX_PATH, or use \"auto\" or \"cpu\"");
  }
  if (requested == "cpu" || !gpus) return torch::kCPU;
  const auto count = static_cast<int>(torch::cuda::device_count());
  return {torch::kCUDA, static_cast<torch::DeviceIndex>(local_rank % count)};
}

// A NCCL communicator for GPU gradients; null on the CPU (the world's MPI one serves).
std::unique_ptr<comm::Communicator> gradient_communicator(const torch::Device& device, comm::World& world) {
  if (!device.is_cuda()) return nullptr;
#ifdef HPCTRAIN_HAVE_NCCL
  return std::make_unique<comm::NcclCommunicator>(world.mpi_comm(), device.index(), world.collective_timeout());
#else
  throw std::runtime_error(
      "training on a GPU needs the NCCL backend, and this hpctrain was built without it "
      "(CUDA and NCCL were not found, or -DHPCTRAIN_WITH_NCCL=OFF)");
#endif
}

// checkpoint.resume: rank 0 picks the checkpoint (auto: the newest that
// verifies, naming the ones it skips) and every rank learns its choice.
std::optional<std::filesystem::path> choose_resume(const config::Experiment& e, comm::World& world, RunLog& log) {
  const std::string& resume = e.checkpoint.resume;
  if (resume == "never") return std::nullopt;
  std::string choice;  // "path:<file>", "none:" or "error:<message>"
  if (world.rank() == 0) {
    try {
      const auto dir = std::filesystem::path(e.job.run_dir) / "checkpoints";
      if (resume == "auto") {
        for (const auto& removed : ckpt::remove_temporaries(dir)) {
          log.line(fmt::format("removed {}: a checkpoint write that never finished", removed.string()));
        }
        const auto found =
            ckpt::newest_verified(dir, [&log](const ckpt::Verdict& v) { log.line(ckpt::skipped_message(v)); });
        choice = found ? "path:" + found->string() : "none:";
      } else {
        const ckpt::Verdict v = ckpt::verify_checkpoint(resume);
        if (!v.ok()) {
          throw ckpt::CheckpointError(
              fmt::format("checkpoint.resume = {} does not verify: {}", resume, fmt::join(v.problems, "; ")));
        }
        choice = "path:" + resume;
      }
    } catch (const std::exception& error) {
      choice = std::string("error:") + error.what();
    }
  }
  choice = comm::allgather_strings(world.comm(), choice, 1 << 16).front();
  const auto colon = choice.find(':');
  const std::string kind = choice.substr(0, colon);
  const std::string value = choice.substr(colon + 1);
  if (kind == "error") throw ckpt::CheckpointError(value);
  if (kind == "none") return std::nullopt;
  return std::filesystem::path(value);
}

}  // namespace

TrainSummary run_training(const config::Experiment& e, comm::World& world, const cluster::Environment& env) {
  const auto wall_start = Clock::now();
  const int rank = world.rank();
  const int ranks = world.size();
  const std::filesystem::path run_dir = e.job.run_dir;
  RunLog log(run_dir, rank);
  if (rank == 0) std::ofstream(run_dir / "config.toml") << e.resolved_toml;

  // Threads and device.
  const runtime::ThreadPlan plan = e.training.threads > 0
                                       ? runtime::ThreadPlan{static_cast<int>(e.training.threads), "training.threads"}
                                       : runtime::plan_threads(env, world.local_size());
  runtime::apply_threads(plan.threads);
  log.line(fmt::format("rank {}: {} compute threads (LibTorch and OpenBLAS) from {}", rank, plan.threads, plan.source));
  log.line(fmt::format("rank {}: heap: {}", rank, runtime::keep_freed_memory(env)));
  const torch::Device device = choose_device(e.training.device, world.local_rank());
  // Gradients travel over NCCL on GPUs and over MPI on CPUs; scalars always over MPI.
  const auto gradient_comm = gradient_communicator(device, world);
  comm::Communicator& grad_comm = gradient_comm ? *gradient_comm : world.comm();
  log.line(fmt::format("rank {}: device {}, gradients over {}", rank, device.str(), grad_comm.backend()));

  // Batch geometry: global = micro * accumulation * ranks.
  const auto global = static_cast<std::uint64_t>(e.training.batch_size);
  if (global % static_cast<std::uint64_t>(ranks) != 0 ||
      (global / static_cast<std::uint64_t>(ranks)) % static_cast<std::uint64_t>(e.training.micro_batch_size) != 0) {
    throw std::runtime_error(
        fmt::format("{}: training.batch_size {} must be a multiple of training.micro_batch_size {} times the {} rank{}",
                    e.path, global, e.training.micro_batch_size, ranks, ranks == 1 ? "" : "s"));
  }
  const auto local = global / static_cast<std::uint64_t>(ranks);
  const auto micro = static_cast<std::size_t>(e.training.micro_batch_size);
  const auto accumulation = local / micro;

  // Data.
  ensure_prepared(e, world, log);
  const std::filesystem::path data_dir = e.data.dir;
  const data::Tokenizer tokenizer = data::Tokenizer::load(data_dir / "tokenizer.model");
  const std::string expected_hash = e.data.tokenizer == "train" ? std::string() : tokenizer.hash();
  const auto seq_len = static_cast<std::size_t>(e.data.seq_len);
  const data::TokenDataset train_set(data_dir, "train", seq_len, expected_hash);
  const data::TokenDataset val_set(data_dir, "val", seq_len, expected_hash);
  if (train_set.tokenizer_hash() != tokenizer.hash()) {
    throw std::runtime_error(
        fmt::format("{}: tokenizer.model does not match the shards' tokenizer hash", data_dir.string()));
  }
  data::DistributedSampler sampler(train_set.size(), global, rank, ranks, e.job.seed);
  const data::MlmMasking masking = data::make_mlm_masking(e.data, e.job.seed, tokenizer);

  // Model and optimizer: the same seed on every rank, then rank 0's weights everywhere.
  torch::manual_seed(e.job.seed);
  const auto model = model::make_model(e.model, tokenizer.vocab_size());
  model->to(device);
  const auto optimizer = make_optimizer(*model, e.optimizer);
  // The reducer: DDP averages gradients every step (and broadcasts rank 0's
  // weights first); DDAP lets replicas step alone and merges their weights.
  std::unique_ptr<reduce::DdpReducer> ddp;
  std::unique_ptr<comm::Communicator> merge_comm;
  std::unique_ptr<reduce::DdapReducer> ddap;
  const config::ParallelConfig& par = e.parallel;
  if (par.reducer == "ddp") {
    ddp = std::make_unique<reduce::DdpReducer>(
        *model, grad_comm,
        reduce::DdpOptions{static_cast<std::size_t>(par.first_bucket_mb * (1 << 20)),
                           static_cast<std::size_t>(par.bucket_cap_mb * (1 << 20)), par.overlap, par.bf16_compression});
    log.line(fmt::format("reducer ddp: {} buckets, {} with backward{}", ddp->bucket_count(),
                         par.overlap ? "overlapped" : "not overlapped",
                         par.bf16_compression ? ", bf16 on the wire" : ""));
  } else {
    broadcast_parameters(*model, grad_comm);
    // Merges run on a communicator of their own, so an overlapped merge never
    // interleaves with the trainer's own collectives.
    merge_comm = device.is_cuda()
                     ? gradient_communicator(device, world)
                     : std::make_unique<comm::MpiCommunicator>(world.mpi_comm(), world.collective_timeout());
    auto moments = [&adamw = *optimizer, &m = *model] {
      AdamState s = adam_state(adamw, m);
      return reduce::OptimizerMoments{std::move(s.exp_avg), std::move(s.exp_avg_sq)};
    };
    ddap = std::make_unique<reduce::DdapReducer>(*model, *merge_comm,
                                                 reduce::DdapOptions{par.merge_every,
                                                                     {par.merge, par.outer_lr, par.outer_momentum},
                                                                     par.merge_mode == "overlapped",
                                                                     par.merge_delay,
                                                                     par.merge_moments},
                                                 moments);
    log.line(
        fmt::format("reducer ddap: {} merge every {} steps, {}{}{}", par.merge, par.merge_every, par.merge_mode,
                    par.merge_mode == "overlapped" ? fmt::format(" (applied {} step(s) later)", par.merge_delay) : "",
                    par.merge_moments ? ", AdamW moments merged too" : ""));
  }
  TrainingParts parts{e, *model, *optimizer, sampler, ddap.get(), world.comm(), tokenizer.hash()};
  LoopPosition position;
  if (const auto from = choose_resume(e, world, log)) {
    position = restore_training_state(*from, parts);
    log.line(fmt::format("resumed from {} at step {} (epoch {}, batch {} of it)", from->string(), position.step,
                         position.sampler.epoch, position.sampler.step));
    const auto dropped = log.resume_at(position.step);
    if (dropped > 0) {
      log.line(fmt::format("metrics.jsonl: {} record(s) after step {} dropped (the steps run again)", dropped,
                           position.step));
    }
  }
  ckpt::CheckpointWriter writer(e.checkpoint.keep, e.checkpoint.async);
  const PreemptionSignal preemption(e.checkpoint.signal);
  // The per-step agreement has a communicator of its own, so its non-blocking
  // collectives never interleave with the trainer's or the reducers'.
  comm::MpiCommunicator control_comm(world.mpi_comm(), world.collective_timeout());
  StepAgreement agreement(control_comm);
  log.line(fmt::format("rank {}: pid {}; SIG{} asks for a checkpoint and exit {}", rank, getpid(), preemption.name(),
                       config::kRequeueExitCode));

  auto report_written = [&log](const ckpt::Written& w) {
    log.line(fmt::format("checkpoint {} written: {:.1f} MB in {:.3f} s ({:.0f} MB/s){}", w.path.string(),
                         static_cast<double>(w.bytes) / 1e6, w.seconds,
                         static_cast<double>(w.bytes) / 1e6 / std::max(w.seconds, 1e-9),
                         w.pruned.empty() ? "" : fmt::format("; removed {} older", w.pruned.size())));
  };
  auto save_checkpoint = [&](bool wait_until_written) {
    const auto start = Clock::now();
    if (rank == 0) {
      if (auto previous = writer.wait()) report_written(*previous);
    }
    ckpt::Snapshot snapshot = capture_training_state(parts, position);
    const std::size_t bytes = snapshot.bytes();
    if (rank == 0) writer.write(ckpt::checkpoint_path(run_dir, position.step), std::move(snapshot));
    log.line(fmt::format("checkpoint at step {}: {:.1f} MB snapshot; training blocked {:.1f} ms", position.step,
                         static_cast<double>(bytes) / 1e6, 1e3 * seconds_since(start)));
    if (wait_until_written && rank == 0) {
      if (auto written = writer.wait()) report_written(*written);
    }
  };

  const double flops_per_token = model->flops_per_token(static_cast<std::int64_t>(seq_len));
  const double peak = runtime::measure_sgemm_peak();
  const bool bf16 = e.training.precision == "bf16";
  log.line(
      fmt::format("model {}: {:.2f}M parameters; {} steps of {} samples x {} tokens ({} per rank, micro-batch "
                  "{}, {} accumulation step{}), {} precision; {:.2f} GFLOP/s fp32 matmul peak per rank",
                  e.model.kind, static_cast<double>(model->parameter_count()) / 1e6, e.training.steps, global, seq_len,
                  local, micro, accumulation, accumulation == 1 ? "" : "s", e.training.precision, peak / 1e9));

  // Training time leaves out the evaluations, so tokens/s and the eval-loss-
  // against-time curves compare reducers, not how often a run evaluates.
  const auto train_start = Clock::now();
  double eval_seconds = 0;
  auto training_seconds = [&] { return seconds_since(train_start) - eval_seconds; };

  auto run_eval = [&](std::int64_t step) {
    const auto eval_start = Clock::now();
    const EvalResult r =
        evaluate(*model, val_set, masking, e.eval.batches, e.training.micro_batch_size, bf16, world.comm());
    Fields fields = {{"eval_loss", r.loss},
                     {"eval_perplexity", r.perplexity},
                     {"eval_tokens", r.tokens},
                     {"train_s", training_seconds()}};
    std::string extra;
    if (model->objective() == model::Objective::kMasked) {
      fields.emplace_back("masked_accuracy", r.masked_accuracy);
      extra = fmt::format(", masked-token accuracy {:.2f}%", 100 * r.masked_accuracy);
    }
    log.record("eval", step, fields);
    log.line(fmt::format("step {:>6} | eval loss {:.4f} | perplexity {:.2f}{}", step, r.loss, r.perplexity, extra));
    eval_seconds += seconds_since(eval_start);
    return r;
  };

  // The loop.
  auto window_start = train_start;
  std::uint64_t tokens_seen = 0;
  bool stop = false;
  const std::int64_t first_step = position.step;  // > 0 after a resume
  std::int64_t timed_from = first_step;           // the first step of the current timing window
  bool preempted = false;
  bool signal_noted = false;
  for (std::int64_t step = position.step; step < e.training.steps && !stop; ++step) {
    const double lr = learning_rate(step, e.training.steps, e.optimizer.lr, e.schedule);
    set_learning_rate(*optimizer, lr);
    const std::uint64_t epoch = sampler.state().epoch + (sampler.state().step == sampler.steps_per_epoch() ? 1 : 0);
    const auto indices = sampler.next();
    if (ddp) {
      ddp->zero_grad();  // the gradients are views into DDP's buckets
    } else {
      // Gradients start undefined, so backward writes them instead of adding to zeros.
      for (auto& p : model->parameters()) p.mutable_grad().reset();
    }
    double step_loss = 0;
    for (std::size_t m = 0; m < accumulation; ++m) {
      if (ddp) ddp->set_sync(m + 1 == accumulation);  // no_sync for the accumulation micro-steps
      const Batch batch = make_batch(train_set, indices, m * micro, micro, model->objective(), masking, epoch);
      torch::Tensor loss;
      {
        const AutocastGuard autocast(bf16, device.is_cuda());
        loss = model->loss(batch.inputs.to(device), batch.targets.to(device));
      }
      // Under DDP the world's average is folded in here (DdpReducer::loss_divisor).
      (loss / (static_cast<double>(accumulation) * (ddp ? ddp->loss_divisor() : 1))).backward();
      step_loss += loss.item<double>() / static_cast<double>(accumulation);
    }
    if (ddp) ddp->finish_backward();
    GradClip clip;
    if (e.optimizer.grad_clip > 0) clip = grad_clip(model->parameters(), e.optimizer.grad_clip);
    adamw_step(*optimizer, clip.scale);
    if (ddap) ddap->after_step(step + 1, sampler.state().step == sampler.steps_per_epoch());
    if (ddp && par.check_replicas_every > 0 && (step + 1) % par.check_replicas_every == 0) {
      reduce::check_replicas(*model, world.comm(), step + 1);
    }
    tokens_seen += global * seq_len;
    position.step = step + 1;
    position.sampler = sampler.state();
    position.lr = lr;
    const bool signalled = preemption.raised();
    if (signalled && !signal_noted) {
      log.line(fmt::format("rank {}: SIG{} received by the end of step {}", rank, preemption.name(), step + 1));
      signal_noted = true;
    }
    agreement.post(step + 1, step_loss, signalled);

    const bool last = step + 1 == e.training.steps;
    const bool log_now = (step + 1) % e.logging.interval == 0 || last;
    const bool eval_now = e.eval.interval > 0 && (step + 1) % e.eval.interval == 0 && !last;
    const bool stop_asked = e.training.stop_after > 0 && step + 1 == e.training.stop_after && !last;
    const bool checkpoint_now = e.checkpoint.interval > 0 && (step + 1) % e.checkpoint.interval == 0 && !last;
    // Agreements settle one step late, except where this step's result is needed now.
    for (const AgreedStep& agreed :
         agreement.settle_through(log_now || eval_now || stop_asked || checkpoint_now ? step + 1 : step)) {
      position.window_loss += agreed.mean_loss;
      ++position.window_steps;
      if (agreed.stop_requested && !last) preempted = stop = true;
    }
    if (stop_asked) stop = true;
    if (rank == 0) {
      if (auto written = writer.finished()) report_written(*written);
    }

    if (log_now) {
      // The logged loss is the mean over ranks and over the steps since the last record.
      const double mean_loss = position.window_loss / static_cast<double>(position.window_steps);
      const auto timed_steps = step + 1 - timed_from;
      const double elapsed = seconds_since(window_start);
      const double tokens_per_s = static_cast<double>(timed_steps) * static_cast<double>(global * seq_len) / elapsed;
      const double mfu = tokens_per_s * flops_per_token / (peak * ranks);
      const double eta = seconds_since(train_start) / static_cast<double>(step + 1 - first_step) *
                         static_cast<double>(e.training.steps - step - 1);
      log.record(
          "train", step + 1,
          {{"loss", mean_loss}, {"lr", lr}, {"grad_norm", clip.norm}, {"tokens_per_s", tokens_per_s}, {"mfu", mfu}});
      log.progress(fmt::format("step {:>6}/{} | loss {:.4f} | lr {:.3e} | {:.0f} tok/s | MFU {:.1f}% | ETA {}",
                               step + 1, e.training.steps, mean_loss, lr, tokens_per_s, 100 * mfu,
                               format_duration(eta)));
      window_start = Clock::now();
      timed_from = step + 1;
      position.window_loss = 0;
      position.window_steps = 0;
    }
    if (eval_now) {
      run_eval(step + 1);
      window_start = Clock::now();
    }
    if (stop) {
      // Every rank reaches this at the same step: the agreement said so.
      position.step = step + 1;
      log.line(fmt::format("step {}: {}; writing a checkpoint and stopping", step + 1,
                           preempted ? fmt::format("SIG{} received (preemption)", preemption.name())
                                     : fmt::format("training.stop_after = {}", e.training.stop_after)));
      save_checkpoint(true);
      world.comm().barrier();  // nobody leaves before the checkpoint is on disk
      TrainSummary stopped;
      stopped.steps = step + 1;
      stopped.preempted = preempted;
      stopped.stopped_early = true;
      stopped.weights_sha256 = weights_sha256(*model);
      log.line(fmt::format("weights sha256 at step {}: {}", step + 1, stopped.weights_sha256));
      return stopped;
    }
    if (checkpoint_now) save_checkpoint(false);
  }
  (void)agreement.settle_through(e.training.steps);
  if (ddap) {
    ddap->finish();
    log.line(fmt::format("ddap: {} merges", ddap->merges()));
  }
  const double train_seconds = training_seconds();

  TrainSummary summary;
  summary.steps = e.training.steps;
  summary.final_eval = run_eval(e.training.steps);
  summary.weights_sha256 = weights_sha256(*model);
  summary.tokens_per_second = static_cast<double>(tokens_seen) / std::max(train_seconds, 1e-9);

  // Timing summary over ranks.
  const auto mine = static_cast<std::int64_t>(seconds_since(wall_start) * 1e6);
  std::vector<std::int64_t> walls(static_cast<std::size_t>(ranks));
  world.comm().allgather(&mine, walls.data(), 1, comm::DType::kInt64);
  const auto [min_it, max_it] = std::minmax_element(walls.begin(), walls.end());
  double sum = 0;
  for (auto w : walls) sum += static_cast<double>(w);
  log.line(fmt::format(
      "wall time per rank: max {:.2f} s, min {:.2f} s, avg {:.2f} s; training {:.2f} s (evaluations "
      "excluded), {:.0f} tokens/s over {} rank{}",
      static_cast<double>(*max_it) / 1e6, static_cast<double>(*min_it) / 1e6, sum / static_cast<double>(ranks) / 1e6,
      train_seconds, summary.tokens_per_second, ranks, ranks == 1 ? "" : "s"));
  log.record("summary", e.training.steps,
             {{"eval_loss", summary.final_eval.loss},
              {"tokens_per_s", summary.tokens_per_second},
              {"train_s", train_seconds},
              {"wall_max_s", static_cast<double>(*max_it) / 1e6}});

  if (model->objective() == model::Objective::kCausal && e.eval.sample_tokens > 0 && rank == 0) {
    const std::string sample = generate(*model, tokenizer, e.eval.prompt, e.eval.sample_tokens, e.eval.temperature,
                                        e.eval.top_k, e.model.max_seq_len, e.job.seed);
    log.line(fmt::format("sample (temperature {}, top-k {}):\n{}\n", e.eval.temperature, e.eval.top_k, sample));
  }
  log.line(
      fmt::format("validation loss {:.4f} nats (perplexity {:.2f}) against the data's unigram entropy {:.4f} "
                  "nats",
                  summary.final_eval.loss, summary.final_eval.perplexity, train_set.unigram_entropy()));
  position.step = e.training.steps;
  position.sampler = sampler.state();
  save_checkpoint(true);
  log.line(fmt::format("final weights sha256: {}", summary.weights_sha256));
  return summary;
}

}  // namespace hpctrain::train
