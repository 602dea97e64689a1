// The experiment file's schema: one struct per TOML section, every key with a
// default (docs/config.md lists them). Values resolve CLI `--set` over file over
// default; the resolved TOML is kept so a run can record exactly what it used.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hpctrain::config {

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
  bool recursive = true;
  std::string format = "auto";        // auto (by extension), text, jsonl
  std::string text_field = "text";    // the JSONL field holding the document
  std::string on_bad_input = "skip";  // skip (and count) or error
  std::int64_t min_document_bytes = 1;
  std::int64_t max_document_bytes = 1 << 20;
  bool deduplicate = true;
  double validation_fraction = 0.05;    // of documents, chosen by content hash
  std::string dir;                      // prepared data set; default: data/<name>
  std::string tokenizer = "train";      // "train" or the path of a SentencePiece .model
  std::string tokenizer_model = "bpe";  // bpe or unigram
  std::int64_t vocab_size = 8192;
  std::int64_t tokenizer_max_lines = 400000;  // lines sampled to train the tokenizer
  std::int64_t threads = 0;                   // 0: every core
  std::int64_t seq_len = 256;
  double mlm_probability = 0.15;     // of non-special tokens
  double mlm_mask_fraction = 0.8;    // of chosen tokens: replaced by the mask token
  double mlm_random_fraction = 0.1;  // ... by a random token; the rest are kept
};

struct ModelConfig {
  std::string kind = "gpt";  // gpt (causal LM), bert (MLM encoder), mlp (seed 003's MLP LM)
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
  // Parameter kinds exempt from weight decay: any of "bias", "norm", "embedding".
  std::vector<std::string> no_decay{"bias", "norm", "embedding"};
};

struct ScheduleConfig {
  std::int64_t warmup_steps = 100;
  std::string decay = "cosine";  // cosine, linear or constant, after warm-up
  double min_lr_ratio = 0.1;     // the decay ends at lr * min_lr_ratio
};

struct TrainingConfig {
  std::int64_t steps = 1000;
  std::int64_t batch_size = 16;       // global: samples per optimizer step over all ranks
  std::int64_t micro_batch_size = 8;  // per rank per forward/backward; the rest is accumulation
  std::string precision = "fp32";     // fp32, or bf16 autocast with fp32 master weights
  std::string device = "auto";        // auto, cpu, cuda
  std::int64_t threads = 0;           // per rank; 0: SLURM_CPUS_PER_TASK or cores / local ranks
  std::int64_t stop_after = 0;        // stop with a checkpoint after this step (time-sliced jobs); 0: never
};

struct EvalConfig {
  std::int64_t interval = 200;  // steps between evaluations (0: only at the end)
  std::int64_t batches = 20;    // validation batches per evaluation, per rank
  std::string prompt = "def ";  // GPT: the sample printed at the end starts here
  std::int64_t sample_tokens = 64;
  double temperature = 0.8;
  std::int64_t top_k = 40;
};

struct LoggingConfig {
  std::int64_t interval = 10;  // steps between metric records
};

struct ParallelConfig {
  std::string reducer = "ddp";  // ddp (synchronous) or ddap (asynchronous)
  double collective_timeout_s = 300;
  // ddp
  double first_bucket_mb = 1;
  double bucket_cap_mb = 25;
  bool overlap = true;                      // allreduce buckets during backward
  bool bf16_compression = false;            // gradients travel as bf16
  std::int64_t check_replicas_every = 100;  // steps; 0 turns the divergence check off
  // ddap
  std::int64_t merge_every = 16;        // H
  std::string merge = "average";        // average, ties, diloco
  std::string merge_mode = "blocking";  // blocking or overlapped
  std::int64_t merge_delay = 1;         // k: steps an overlapped merge stays in flight
  bool merge_moments = false;           // merge AdamW's moments with the weights
  double outer_lr = 0.7;                // diloco
  double outer_momentum = 0.9;          // diloco
};

// docs/checkpoints.md. Preemption: `signal` asks every rank to stop at the next
// step boundary, write a checkpoint and exit with kRequeueExitCode.
struct CheckpointConfig {
  std::int64_t interval = 500;  // steps between checkpoints; 0: only at the end and on preemption
  std::int64_t keep = 3;        // newest checkpoints kept; 0 keeps all
  bool async = true;            // write on a background thread while training goes on
  std::string resume = "auto";  // auto (newest that verifies), never, or a checkpoint file
  std::string signal = "USR1";  // USR1, USR2 or TERM
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
