// The training run: `hpctrain train EXP.toml` (or `hpctrain EXP.toml`).
//
// The constructor sets the run up: threads and device, the data set (prepared
// on rank 0 first if it is not yet), the model, AdamW, the reducer, and a
// resume from the checkpoint checkpoint.resume chooses. run() is the loop:
// one step counter, counted from 1; each step is train_step(), then what the
// step's plan (step_plan.h) says: a training record, an evaluation, a
// checkpoint; the last step (or an agreed stop: the preemption signal on any
// rank, or training.stop_after) ends inside the loop with the final
// evaluation and checkpoint.
//
// Components own their config, their schedule and their checkpoint state:
// the reducer (model, optimizer, replicas: reduce/reducer.h), the training
// data (the sampler's position), the run report (its log window's losses:
// run_report.h), the checkpointer (which checkpoint, and writing it), the
// weight average, the CPU generator; they are registered once as the
// checkpointed state. The evaluator decides what an evaluation reads, the
// run report what a report says.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster/environment.h"
#include "comm/mpi_communicator.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "data/token_dataset.h"
#include "data/tokenizer.h"
#include "model/language_model.h"
#include "optim/lr_schedule.h"
#include "optim/optimizer.h"
#include "reduce/reducer.h"
#include "train/batch_geometry.h"
#include "train/checkpointer.h"
#include "train/evaluator.h"
#include "train/preemption.h"
#include "train/run_report.h"
#include "train/sequence_scores.h"
#include "train/step_agreement.h"
#include "train/step_plan.h"
#include "train/training_data.h"
#include "train/weight_average.h"

namespace hpctrain::train {

struct StepResult {
  double loss = 0;  // this rank's, averaged over the micro-steps
  double lr = 0;
  optim::GradClip clip;
};

// What a run trains on, for a Trainer built without the prepared data set
// (the benches): the batches, and no tokenizer, evaluation or sample.
struct TrainingSource {
  std::unique_ptr<TrainingData> data;
  std::int64_t vocab_size = 0;
};

class Trainer {
 public:
  // Throws on bad configuration (naming the fields), on data errors, and when
  // the chosen checkpoint cannot continue this run. `world` and `env` must
  // outlive the Trainer; the experiment is copied.
  Trainer(const config::Experiment& experiment, comm::World& world, const cluster::Environment& env);
  Trainer(const config::Experiment& experiment, comm::World& world, const cluster::Environment& env,
          TrainingSource source);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  TrainSummary run();

  // One optimizer step, all its micro-steps: what run() does each step (and
  // what the benches time). Advances step().
  StepResult train_step();

  // Optimizer steps done: after a resume, those of the checkpoint included.
  [[nodiscard]] std::int64_t step() const { return step_; }
  [[nodiscard]] model::LanguageModel& model() { return *model_; }
  [[nodiscard]] double flops_per_token() const { return flops_per_token_; }
  // Bytes this rank's reducer has sent (Reducer::bytes_sent).
  [[nodiscard]] std::uint64_t bytes_sent() const { return reducer_->bytes_sent(); }
  // The matmul peak of this rank, FLOP/s, measured at start-up (bf16 for a
  // bf16 run on a GPU, else fp32: train/throughput.h).
  [[nodiscard]] double peak_flops() const { return peak_; }

 private:
  void set_up();
  // The components whose state a checkpoint holds, in the order they write it.
  void register_checkpointed_state();
  void resume_from(const std::filesystem::path& path);
  // Logs a warning when this run's learning-rate schedule gives the next step
  // another rate than the checkpoint's did (training.steps, [schedule] or
  // optimizer.lr changed).
  void warn_if_schedule_jumps(const ckpt::CheckpointReader& checkpoint);
  // Posts this step's loss and stop request; true when every rank has agreed to stop now.
  bool agree_to_stop(const StepResult& result, const StepPlan& plan);
  [[nodiscard]] std::string stop_reason() const;
  // Reads the samples of the next two steps not yet read (none past
  // training.steps), keeping the first failure (read_ahead_failure_).
  void read_ahead();
  // After the checkpoint of a run stopped because a rank could not read its
  // samples: the agreed error naming the shard, on every rank.
  [[noreturn]] void fail_on_unreadable_data();
  // After a signal's checkpoint: how long it took from the signal, to compare with SLURM's KillWait.
  void report_stop_time();
  // The periodic evaluation, or with `last` the final one; the weight average
  // beside the raw weights. True when it is the best so far
  // (checkpoint.keep_best): this step's checkpoint must then be written.
  bool evaluate(bool last);
  void report_test();
  void checkpoint(bool wait);
  // After the last step: the reducer's last merge, and the training time stops.
  void finish_training();
  void print_sample();
  TrainSummary finish(bool stopped);

  // A copy: the caller's Experiment may be a temporary, and the components
  // below (evaluator, checkpointer) keep references to this one.
  const config::Experiment experiment_;
  comm::World& world_;
  const cluster::Environment& env_;
  RunReport report_;
  std::optional<data::Tokenizer> tokenizer_;  // absent with a TrainingSource
  std::optional<data::TokenDataset> train_set_;
  std::unique_ptr<TrainingData> data_;
  std::optional<Evaluator> evaluator_;
  std::optional<WeightAverage> weight_average_;  // training.ema_decay > 0
  std::int64_t vocab_size_ = 0;
  std::shared_ptr<model::LanguageModel> model_;
  std::unique_ptr<optim::AdamW> optimizer_;
  std::unique_ptr<reduce::Reducer> reducer_;
  optim::LrSchedule schedule_;
  std::unique_ptr<Checkpointer> checkpointer_;
  std::unique_ptr<PreemptionSignal> preemption_;
  // The per-step agreement has a communicator of its own, so its non-blocking
  // collectives never interleave with the trainer's or the reducers'.
  std::unique_ptr<comm::MpiCommunicator> control_comm_;
  std::unique_ptr<StepAgreement> agreement_;

  // A checkpointed component: what it adds to a snapshot, and how it takes it
  // back (empty where nothing is read back: the learning rate, which the step
  // determines).
  struct CheckpointedState {
    std::function<void(ckpt::Snapshot&)> save;
    std::function<void(const ckpt::CheckpointReader&)> load;
  };
  std::vector<CheckpointedState> checkpointed_;

  BatchGeometry batch_;  // this rank's samples and micro-steps
  double flops_per_token_ = 0;
  double peak_ = 0;  // matmul FLOP/s per rank (runtime/matmul_peak.h)
  std::int64_t step_ = 0;
  bool stop_requested_ = false;  // the last agreed step asked to stop
  bool terminated_ = false;      // ... because SIGTERM reached some rank
  bool signal_noted_ = false;
  // Samples are read two steps ahead, and a failure travels in the step
  // agreement (one step late): every rank then learns of it at a step
  // boundary before the unreadable step, checkpoints and stops.
  std::optional<std::string> read_ahead_failure_;  // this rank's, the first
  bool unreadable_ = false;                        // agreed: some rank's read failed
  std::optional<Evaluation> last_eval_;
  std::optional<EvalResult> test_eval_;
};

}  // namespace hpctrain::train
