// The experiment file's schema: one struct per TOML section, every key with a
// default (docs/config.md lists them). Values resolve CLI `--set` over file over
// default; the resolved TOML is kept so a run can record exactly what it used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/choices.h"

namespace hpctrain::config {

// auto: text or JSONL by file extension. The token formats are files another
// tool tokenized: llm.c's .bin (a 256 x int32 header, then uint16 or uint32
// tokens) and headerless little-endian uint16 / uint32 (nanoGPT's train.bin).
enum class DataFormat { kAuto, kText, kJsonl, kLlmc, kUint16, kUint32 };
enum class BadInput { kSkip, kError };
enum class TokenizerKind { kBpe, kUnigram };
enum class ModelKind { kGpt, kBert, kMlp };
// What a parameter is, from its name (model::parameter_kind): weight decay exempts kinds.
enum class ParameterKind { kWeight, kBias, kNorm, kEmbedding };
enum class Decay { kCosine, kLinear, kConstant };
enum class Precision { kFp32, kBf16 };
enum class Device { kAuto, kCpu, kCuda };
enum class ReducerKind { kDdp, kDdap };
enum class MergeKind { kAverage, kTies, kDiloco };
enum class MergeMode { kBlocking, kOverlapped };
// What a rank does between two polls of a pending collective (docs/bootstrap.md).
enum class CommWait { kSpin, kYield, kSleep };
enum class Signal { kUsr1, kUsr2, kTerm };
enum class ResumeMode { kAuto, kNever, kFile };
// What the final evaluation reads: every sequence of the validation split, or
// the same sample as the periodic evaluations.
enum class EvalFinal { kFull, kSample };

template <>
struct ChoiceTable<DataFormat> {
  static constexpr std::array<Choice<DataFormat>, 6> entries{{{"auto", DataFormat::kAuto},
                                                              {"text", DataFormat::kText},
                                                              {"jsonl", DataFormat::kJsonl},
                                                              {"llmc", DataFormat::kLlmc},
                                                              {"uint16", DataFormat::kUint16},
                                                              {"uint32", DataFormat::kUint32}}};
};
template <>
struct ChoiceTable<BadInput> {
  static constexpr std::array<Choice<BadInput>, 2> entries{{{"skip", BadInput::kSkip}, {"error", BadInput::kError}}};
};
template <>
struct ChoiceTable<TokenizerKind> {
  static constexpr std::array<Choice<TokenizerKind>, 2> entries{
      {{"bpe", TokenizerKind::kBpe}, {"unigram", TokenizerKind::kUnigram}}};
};
template <>
struct ChoiceTable<ModelKind> {
  static constexpr std::array<Choice<ModelKind>, 3> entries{
      {{"gpt", ModelKind::kGpt}, {"bert", ModelKind::kBert}, {"mlp", ModelKind::kMlp}}};
};
template <>
struct ChoiceTable<ParameterKind> {
  static constexpr std::array<Choice<ParameterKind>, 4> entries{{{"weight", ParameterKind::kWeight},
                                                                 {"bias", ParameterKind::kBias},
                                                                 {"norm", ParameterKind::kNorm},
                                                                 {"embedding", ParameterKind::kEmbedding}}};
};
template <>
struct ChoiceTable<Decay> {
  static constexpr std::array<Choice<Decay>, 3> entries{
      {{"cosine", Decay::kCosine}, {"linear", Decay::kLinear}, {"constant", Decay::kConstant}}};
};
template <>
struct ChoiceTable<Precision> {
  static constexpr std::array<Choice<Precision>, 2> entries{{{"fp32", Precision::kFp32}, {"bf16", Precision::kBf16}}};
};
template <>
struct ChoiceTable<Device> {
  static constexpr std::array<Choice<Device>, 3> entries{
      {{"auto", Device::kAuto}, {"cpu", Device::kCpu}, {"cuda", Device::kCuda}}};
};
template <>
struct ChoiceTable<ReducerKind> {
  static constexpr std::array<Choice<ReducerKind>, 2> entries{
      {{"ddp", ReducerKind::kDdp}, {"ddap", ReducerKind::kDdap}}};
};
template <>
struct ChoiceTable<MergeKind> {
  static constexpr std::array<Choice<MergeKind>, 3> entries{
      {{"average", MergeKind::kAverage}, {"ties", MergeKind::kTies}, {"diloco", MergeKind::kDiloco}}};
};
template <>
struct ChoiceTable<MergeMode> {
  static constexpr std::array<Choice<MergeMode>, 2> entries{
      {{"blocking", MergeMode::kBlocking}, {"overlapped", MergeMode::kOverlapped}}};
};
template <>
struct ChoiceTable<CommWait> {
  static constexpr std::array<Choice<CommWait>, 3> entries{
      {{"spin", CommWait::kSpin}, {"yield", CommWait::kYield}, {"sleep", CommWait::kSleep}}};
};
template <>
struct ChoiceTable<EvalFinal> {
  static constexpr std::array<Choice<EvalFinal>, 2> entries{
      {{"full", EvalFinal::kFull}, {"sample", EvalFinal::kSample}}};
};
template <>
struct ChoiceTable<Signal> {
  static constexpr std::array<Choice<Signal>, 3> entries{
      {{"USR1", Signal::kUsr1}, {"USR2", Signal::kUsr2}, {"TERM", Signal::kTerm}}};
};

struct JobConfig {
  std::string name;  // default: the experiment file's stem
  std::uint64_t seed = 1234;
  std::string run_dir;  // default: runs/<name>
};

struct DataConfig {
  // Files or directories; "@python-stdlib" names the quickstart corpus, the
  // Python standard library sources (resolved by data::resolve_source).
  std::vector<std::string> sources{"@python-stdlib"};
  std::string glob = "*";  // file-name pattern inside directories
  // Patterns (fnmatch) of paths inside a source directory, relative to it, left out.
  std::vector<std::string> exclude;
  bool recursive = true;
  DataFormat format = DataFormat::kAuto;
  std::string text_field = "text";          // the JSONL field holding the document
  BadInput on_bad_input = BadInput::kSkip;  // skip (and count) or error
  std::int64_t min_document_bytes = 1;
  std::int64_t max_document_bytes = 1 << 20;
  bool deduplicate = true;
  double validation_fraction = 0.05;  // of documents, chosen by content hash
  double test_fraction = 0.0;         // of documents, a third split no run reads before its very end
  // Token files carry no documents to split by: their validation (and test)
  // splits are files of their own, named here like `sources`.
  std::vector<std::string> validation_sources;
  std::vector<std::string> test_sources;
  std::string dir;                  // prepared data set; default: data/<name>
  std::string tokenizer = "train";  // "train" or the path of a SentencePiece .model
  TokenizerKind tokenizer_model = TokenizerKind::kBpe;
  std::int64_t vocab_size = 8192;
  std::int64_t tokenizer_max_lines = 400000;  // lines sampled to train the tokenizer
  std::int64_t threads = 0;                   // 0: every core
  std::int64_t seq_len = 256;
  double mlm_probability = 0.15;     // of non-special tokens
  double mlm_mask_fraction = 0.8;    // of chosen tokens: replaced by the mask token
  double mlm_random_fraction = 0.1;  // ... by a random token; the rest are kept

  [[nodiscard]] bool token_files() const {
    return format == DataFormat::kLlmc || format == DataFormat::kUint16 || format == DataFormat::kUint32;
  }
  // Token files have a tokenizer only when data.tokenizer names the one they came from.
  [[nodiscard]] bool trains_tokenizer() const { return tokenizer == "train" && !token_files(); }
  [[nodiscard]] bool has_tokenizer() const { return !token_files() || tokenizer != "train"; }
  [[nodiscard]] bool has_test_split() const { return test_fraction > 0 || !test_sources.empty(); }
};

struct ModelConfig {
  ModelKind kind = ModelKind::kGpt;  // gpt (causal LM), bert (MLM encoder), mlp (a next-token MLP over a window)
  std::int64_t n_layer = 4;
  std::int64_t n_head = 4;
  std::int64_t d_model = 256;
  std::int64_t max_seq_len = 0;  // default: data.seq_len
  double init_std = 0.02;
};

struct OptimizerConfig {
  double lr = 3e-4;  // peak learning rate
  double weight_decay = 0.1;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double grad_clip = 1.0;  // global-norm clip; 0 turns it off
  // Parameter kinds exempt from weight decay.
  std::vector<ParameterKind> no_decay{ParameterKind::kBias, ParameterKind::kNorm, ParameterKind::kEmbedding};
};

struct ScheduleConfig {
  std::int64_t warmup_steps = 100;
  Decay decay = Decay::kCosine;  // after warm-up
  double min_lr_ratio = 0.1;     // the decay ends at lr * min_lr_ratio
};

struct TrainingConfig {
  std::int64_t steps = 1000;
  std::int64_t batch_size = 16;            // global: samples per optimizer step over all ranks
  std::int64_t micro_batch_size = 8;       // the most per rank per forward/backward; the rest is accumulation
  Precision precision = Precision::kFp32;  // or bf16 autocast with fp32 master weights
  Device device = Device::kAuto;
  std::int64_t threads = 0;     // per rank; 0: SLURM_CPUS_PER_TASK or cores / local ranks
  std::int64_t stop_after = 0;  // stop with a checkpoint after this step (time-sliced jobs); 0: never
  // > 0: keep an exponential moving average of the evaluation weights,
  // ema <- decay * ema + (1 - decay) * weights after every step (train/weight_average.h).
  double ema_decay = 0;
};

struct EvalConfig {
  std::int64_t interval = 200;  // steps between evaluations (0: only at the end)
  // Sequences of the validation split in every periodic evaluation, all ranks
  // together: the same seeded sample, spread over the whole split, at every
  // evaluation and every world size (data/eval_sample.h). The whole split
  // when it has fewer.
  std::int64_t samples = 512;
  EvalFinal final_eval = EvalFinal::kFull;
  // At the very end, also the whole test split, when the data set has one (data.test_fraction).
  bool test = true;
  std::string prompt = "def ";  // GPT: the sample printed at the end starts here
  std::int64_t sample_tokens = 64;
  double temperature = 0.8;
  std::int64_t top_k = 40;
  // `batches` (validation micro-batches per rank) from experiments and
  // checkpoints made before eval.samples: accepted, ignored, and reported.
  bool retired_batches = false;

  // After step `step` (counted from 1): every `interval` steps, and after the last.
  [[nodiscard]] bool should_eval(std::int64_t step, bool last) const {
    return last || (interval > 0 && step % interval == 0);
  }
};

struct LoggingConfig {
  std::int64_t interval = 10;  // steps between metric records

  [[nodiscard]] bool should_log(std::int64_t step, bool last) const { return last || step % interval == 0; }
};

struct ParallelConfig {
  ReducerKind reducer = ReducerKind::kDdp;  // synchronous or asynchronous
  double collective_timeout_s = 300;
  double prepare_timeout_s = 3600;  // the other ranks' wait while rank 0 prepares the data set
  CommWait comm_wait = CommWait::kYield;
  // ddp
  double first_bucket_mb = 1;
  double bucket_cap_mb = 25;
  bool overlap = true;                      // allreduce buckets during backward
  bool bf16_compression = false;            // gradients travel as bf16
  int zero = 0;                             // 1: ZeRO-1, the optimizer state sharded over the ranks
  std::int64_t check_replicas_every = 100;  // steps; 0 turns the divergence check off
  // ddap
  std::int64_t merge_every = 16;  // H
  MergeKind merge = MergeKind::kAverage;
  MergeMode merge_mode = MergeMode::kBlocking;
  std::int64_t merge_delay = 1;  // k: steps an overlapped merge stays in flight
  bool merge_moments = false;    // merge AdamW's moments with the weights
  double outer_lr = 0.7;         // diloco
  double outer_momentum = 0.9;   // diloco
};

// docs/checkpoints.md. Preemption: `signal` asks every rank to stop at the next
// step boundary, write a checkpoint and exit with kRequeueExitCode.
struct CheckpointConfig {
  std::int64_t interval = 500;  // steps between checkpoints; 0: only at the end and on preemption
  std::int64_t keep = 3;        // newest checkpoints kept; 0 keeps all
  // Also keep the checkpoint of the lowest evaluation loss, never pruned
  // (written at that evaluation when it is not a checkpoint step).
  bool keep_best = true;
  bool async = true;  // write on a background thread while training goes on
  // Every rank writes its own shard in parallel, rank 0 an index after them
  // (docs/checkpoints.md, "Sharded checkpoints"); off: rank 0 writes one file.
  bool sharded = false;
  ResumeMode resume = ResumeMode::kAuto;  // auto (newest that verifies), never, or a file
  std::string resume_file;                // resume = kFile
  Signal signal = Signal::kUsr1;

  // After step `step`: every `interval` steps, and after the last (a stop asks for one too).
  [[nodiscard]] bool should_checkpoint(std::int64_t step, bool last) const {
    return last || (interval > 0 && step % interval == 0);
  }
};

// The exit status of a run stopped by the preemption signal after writing its
// checkpoint: "requeue me" to the batch script (EX_TEMPFAIL from sysexits.h).
constexpr int kRequeueExitCode = 75;

struct Experiment {
  std::string path;  // the experiment file
  JobConfig job;
  DataConfig data;
  ModelConfig model;
  OptimizerConfig optimizer;
  ScheduleConfig schedule;
  TrainingConfig training;
  EvalConfig eval;
  LoggingConfig logging;
  ParallelConfig parallel;
  CheckpointConfig checkpoint;
  std::string resolved_toml;  // every key, after overrides and defaults
};

// Throws ConfigError with file:line:column (or the offending --set) on a TOML
// syntax error, an unknown section or key, a wrong type or an out-of-range value.
Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides = {});

// The same from TOML text (a checkpoint's stored config); `origin` names it in errors.
Experiment load_experiment_text(const std::string& text, const std::string& origin,
                                const std::vector<std::string>& overrides = {});

}  // namespace hpctrain::config
