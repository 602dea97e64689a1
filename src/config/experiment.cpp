#include "config/experiment.h"
#include "config/experiment_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <sstream>

#include "config/config_error.h"
#include "config/section_reader.h"
#include "config/toml_input.h"
#include "support/text.h"

namespace hpctrain::config {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::size_t kMaxOverrideBytes = std::size_t{64} << 10;
std::vector<std::string> section_names() {
  return {"job",      "model", "data",    "optimizer",  "schedule", "training",
          "parallel", "eval",  "logging", "checkpoint", "slurm",    "sweep"};
}

std::string read_experiment_file(const std::string& path) {
  if (!std::filesystem::exists(path)) throw ConfigError(fmt::format("{}: no such experiment file", path));
  return read_toml_file(path);
}

// Where the cross-key check of KEYS finds its values: their file:line:column
// or --set, or the experiment file when every one is a default.
std::string origins(const toml::table& root, const std::string& path,
                    std::initializer_list<std::pair<const char*, const char*>> keys) {
  std::vector<std::string> found;
  for (const auto& [section, key] : keys) {
    const toml::node* node = root.at_path(std::string(section) + "." + key).node();
    if (node == nullptr) continue;
    const std::string where = location(node->source());
    if (std::find(found.begin(), found.end(), where) == found.end()) found.push_back(where);
  }
  return found.empty() ? path : fmt::format("{}", fmt::join(found, ", "));
}

// A TOML basic string holding `text` exactly.
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + '"';
}

// Token files and text corpora split differently: text by a content hash of
// each document (the fractions), token files by the files named for each split.
void check_token_files(const DataConfig& d, const toml::table& root, const std::string& path) {
  if (d.token_files()) {
    if (d.validation_sources.empty()) {
      throw ConfigError(fmt::format(
          "{}: data.format = \"{}\" reads token files, which hold no documents to split: name the validation "
          "split's files in data.validation_sources (llm.c writes *_val_*.bin, nanoGPT val.bin)",
          origins(root, path, {{"data", "format"}}), name_of(d.format)));
    }
    if (d.test_fraction > 0) {
      throw ConfigError(
          fmt::format("{}: data.test_fraction splits documents, which token files do not have: name the "
                      "test split's files in data.test_sources instead",
                      origins(root, path, {{"data", "test_fraction"}, {"data", "format"}})));
    }
    return;
  }
  if (!d.validation_sources.empty() || !d.test_sources.empty()) {
    throw ConfigError(fmt::format(
        "{}: data.validation_sources and data.test_sources name the splits of token files (data.format = \"llmc\", "
        "\"uint16\" or \"uint32\"); a text corpus is split by data.validation_fraction and data.test_fraction",
        origins(root, path, {{"data", "validation_sources"}, {"data", "test_sources"}, {"data", "format"}})));
  }
}

// "section.key=value": the value is TOML ("4096", "true", "[\"a\"]", "'x'") or,
// when it does not parse as TOML, a bare string.
void apply_override(toml::table& root, const std::string& text) {
  const auto eq = text.find('=');
  const std::string key_path = text.substr(0, eq);
  const auto dot = key_path.find('.');
  if (eq == std::string::npos || dot == std::string::npos || key_path.find('.', dot + 1) != std::string::npos ||
      dot == 0 || dot + 1 == key_path.size()) {
    throw ConfigError(fmt::format("--set {}: expected section.key=value", support::printable(text)));
  }
  const std::string section = key_path.substr(0, dot);
  const std::string key = key_path.substr(dot + 1);
  const std::string value = text.substr(eq + 1);
  const std::string origin = "--set " + support::printable(text);
  const std::vector<std::string> sections = section_names();
  if (std::find(sections.begin(), sections.end(), section) == sections.end()) {
    const std::string hint = closest_match(section, sections);
    throw ConfigError(fmt::format("{}: unknown section [{}]{}", origin, section,
                                  hint.empty() ? "" : fmt::format(" (did you mean [{}]?)", hint)));
  }
  if (!root.contains(section)) root.insert(section, toml::table{});
  toml::table* target = root.get(section)->as_table();
  if (target == nullptr) throw ConfigError(fmt::format("{}: [{}] is not a table", origin, section));
  if (value.size() > kMaxOverrideBytes) {
    throw ConfigError(
        fmt::format("{}: a value of {} bytes, more than {}", origin.substr(0, 64), value.size(), kMaxOverrideBytes));
  }
  toml::table parsed;
  bool is_toml = false;
  try {
    check_toml_limits("v = " + value, origin);
    parsed = toml::parse("v = " + value, origin);
    is_toml = true;
  } catch (const ConfigError&) {
    // Too large or too deep: say so. A non-ASCII byte outside a string is
    // refused by the same check, but it only means the value is no TOML.
    const bool non_ascii =
        std::any_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
    if (!non_ascii) throw;
  } catch (const toml::parse_error&) {
  }
  if (!is_toml) {
    // Not TOML: the value is a bare string (whose control characters, newlines
    // included, toml_string escapes; invalid UTF-8 stays invalid).
    const std::string quoted = "v = " + toml_string(value);
    check_toml_limits(quoted, origin);
    try {
      parsed = toml::parse(quoted, origin);
    } catch (const toml::parse_error& e) {
      throw ConfigError(fmt::format("{}: neither a TOML value nor a string: {}", origin, e.description()));
    }
  }
  // "1\nc = 2" parses as two keys: a value must be one TOML value.
  if (parsed.size() != 1 || !parsed.contains("v")) {
    throw ConfigError(
        fmt::format("{}: the value is more than one TOML value (a newline?); quote it to set a string: {}.{}='\"...\"'",
                    origin, section, key));
  }
  // Moves the parsed node out of `parsed` (ours, about to die): a move keeps its
  // source region, the --set origin of later errors, which a copy would drop.
  parsed.get("v")->visit([&](auto&& node) {
    target->insert_or_assign(key, std::move(node));  // NOLINT(bugprone-move-forwarding-reference)
  });
}

Experiment resolve(toml::table root, const std::string& path, const std::vector<std::string>& overrides) {
  for (const auto& o : overrides) apply_override(root, o);

  const std::vector<std::string> sections = section_names();
  for (const auto& [name, node] : root) {
    if (std::find(sections.begin(), sections.end(), name.str()) != sections.end()) continue;
    const std::string hint = closest_match(name.str(), sections);
    if (!node.is_table()) {
      throw ConfigError(fmt::format("{}: key '{}' is outside any section (sections: [{}])", location(node.source()),
                                    name.str(), fmt::join(sections, "], [")));
    }
    throw ConfigError(fmt::format("{}: unknown section [{}]{}", location(node.source()), name.str(),
                                  hint.empty() ? "" : fmt::format(" (did you mean [{}]?)", hint)));
  }

  Experiment e;
  e.path = path;
  toml::table resolved;

  SectionReader job(root, "job", resolved);
  e.job.name = job.string("name", std::filesystem::path(path).stem().string());
  e.job.seed = static_cast<std::uint64_t>(job.integer("seed", 1234, 0, kMax));
  e.job.run_dir = job.string("run_dir", "runs/" + e.job.name);
  if (e.job.run_dir.empty()) {
    throw ConfigError(fmt::format("{}: job.run_dir is empty", origins(root, path, {{"job", "run_dir"}})));
  }
  job.finish();

  SectionReader data(root, "data", resolved);
  DataConfig& d = e.data;
  d.sources = data.strings("sources", d.sources);
  d.glob = data.string("glob", d.glob);
  d.exclude = data.strings("exclude", d.exclude);
  d.recursive = data.boolean("recursive", d.recursive);
  d.format = data.choice("format", d.format);
  d.text_field = data.string("text_field", d.text_field);
  d.on_bad_input = data.choice("on_bad_input", d.on_bad_input);
  d.min_document_bytes = data.integer("min_document_bytes", d.min_document_bytes, 0, kMax);
  d.max_document_bytes = data.integer("max_document_bytes", d.max_document_bytes, 1, kMax);
  d.deduplicate = data.boolean("deduplicate", d.deduplicate);
  d.validation_fraction = data.number("validation_fraction", d.validation_fraction, 0.0, 0.5);
  d.test_fraction = data.number("test_fraction", d.test_fraction, 0.0, 0.5);
  d.validation_sources = data.strings("validation_sources", d.validation_sources);
  d.test_sources = data.strings("test_sources", d.test_sources);
  d.dir = data.string("dir", "data/" + e.job.name);
  if (d.dir.empty()) throw ConfigError(fmt::format("{}: data.dir is empty", origins(root, path, {{"data", "dir"}})));
  d.tokenizer = data.string("tokenizer", d.tokenizer);
  d.tokenizer_model = data.choice("tokenizer_model", d.tokenizer_model);
  d.vocab_size = data.integer("vocab_size", d.vocab_size, 300, 1 << 20);
  d.tokenizer_max_lines = data.integer("tokenizer_max_lines", d.tokenizer_max_lines, 1000, kMax);
  d.threads = data.integer("threads", d.threads, 0, 1024);
  d.seq_len = data.integer("seq_len", d.seq_len, 1, 1 << 20);
  d.mlm_probability = data.number("mlm_probability", d.mlm_probability, 0.0, 1.0);
  d.mlm_mask_fraction = data.number("mlm_mask_fraction", d.mlm_mask_fraction, 0.0, 1.0);
  d.mlm_random_fraction = data.number("mlm_random_fraction", d.mlm_random_fraction, 0.0, 1.0);
  data.finish();
  if (d.mlm_mask_fraction + d.mlm_random_fraction > 1.0) {
    throw ConfigError(fmt::format("{}: data.mlm_mask_fraction + data.mlm_random_fraction = {} exceeds 1",
                                  origins(root, path, {{"data", "mlm_mask_fraction"}, {"data", "mlm_random_fraction"}}),
                                  d.mlm_mask_fraction + d.mlm_random_fraction));
  }
  if (d.validation_fraction + d.test_fraction >= 1.0) {
    throw ConfigError(fmt::format("{}: data.validation_fraction + data.test_fraction = {} leaves no training split",
                                  origins(root, path, {{"data", "validation_fraction"}, {"data", "test_fraction"}}),
                                  d.validation_fraction + d.test_fraction));
  }
  check_token_files(d, root, path);
  if (d.min_document_bytes > d.max_document_bytes) {
    throw ConfigError(fmt::format("{}: data.min_document_bytes {} exceeds data.max_document_bytes {}",
                                  origins(root, path, {{"data", "min_document_bytes"}, {"data", "max_document_bytes"}}),
                                  d.min_document_bytes, d.max_document_bytes));
  }

  SectionReader model(root, "model", resolved);
  ModelConfig& m = e.model;
  m.kind = model.choice("kind", m.kind);
  m.n_layer = model.integer("n_layer", m.n_layer, 1, 1024);
  m.n_head = model.integer("n_head", m.n_head, 1, 1024);
  m.d_model = model.integer("d_model", m.d_model, 1, 1 << 16);
  m.max_seq_len = model.integer("max_seq_len", d.seq_len, 1, 1 << 20);
  m.init_std = model.number("init_std", m.init_std, 0.0, 1.0);
  model.finish();
  if (m.kind == ModelKind::kBert && d.token_files() && !d.has_tokenizer()) {
    throw ConfigError(
        fmt::format("{}: a bert model masks tokens with its tokenizer's <mask> piece, and token files "
                    "come with none: set data.tokenizer to the hpctrain tokenizer they were made with",
                    origins(root, path, {{"model", "kind"}, {"data", "format"}})));
  }
  if (m.d_model % m.n_head != 0) {
    throw ConfigError(fmt::format("{}: model.d_model {} is not a multiple of model.n_head {}",
                                  origins(root, path, {{"model", "d_model"}, {"model", "n_head"}}), m.d_model,
                                  m.n_head));
  }
  if (m.max_seq_len < d.seq_len) {
    throw ConfigError(fmt::format("{}: model.max_seq_len {} is shorter than data.seq_len {}",
                                  origins(root, path, {{"model", "max_seq_len"}, {"data", "seq_len"}}), m.max_seq_len,
                                  d.seq_len));
  }

  SectionReader optimizer(root, "optimizer", resolved);
  OptimizerConfig& o = e.optimizer;
  o.lr = optimizer.number("lr", o.lr, 0.0, 10.0);
  o.weight_decay = optimizer.number("weight_decay", o.weight_decay, 0.0, 10.0);
  o.beta1 = optimizer.number("beta1", o.beta1, 0.0, 0.999999);
  o.beta2 = optimizer.number("beta2", o.beta2, 0.0, 0.999999);
  o.eps = optimizer.number("eps", o.eps, 0.0, 1.0);
  o.grad_clip = optimizer.number("grad_clip", o.grad_clip, 0.0, 1e9);
  o.no_decay = optimizer.choices("no_decay", o.no_decay,
                                 {ParameterKind::kBias, ParameterKind::kNorm, ParameterKind::kEmbedding});
  optimizer.finish();

  SectionReader schedule(root, "schedule", resolved);
  e.schedule.warmup_steps = schedule.integer("warmup_steps", e.schedule.warmup_steps, 0, kMax);
  e.schedule.decay = schedule.choice("decay", e.schedule.decay);
  e.schedule.min_lr_ratio = schedule.number("min_lr_ratio", e.schedule.min_lr_ratio, 0.0, 1.0);
  schedule.finish();

  SectionReader training(root, "training", resolved);
  TrainingConfig& t = e.training;
  t.steps = training.integer("steps", t.steps, 0, kMax);
  t.batch_size = training.integer("batch_size", t.batch_size, 1, 1 << 24);
  t.micro_batch_size = training.integer("micro_batch_size", t.micro_batch_size, 1, 1 << 24);
  t.precision = training.choice("precision", t.precision);
  t.device = training.choice("device", t.device);
  t.threads = training.integer("threads", t.threads, 0, 1024);
  t.stop_after = training.integer("stop_after", t.stop_after, 0, kMax);
  t.ema_decay = training.number("ema_decay", t.ema_decay, 0.0, 0.999999);
  training.finish();

  SectionReader parallel(root, "parallel", resolved);
  ParallelConfig& p = e.parallel;
  p.reducer = parallel.choice("reducer", p.reducer);
  p.collective_timeout_s = parallel.number("collective_timeout_s", p.collective_timeout_s, 1, 1e6);
  p.prepare_timeout_s = parallel.number("prepare_timeout_s", p.prepare_timeout_s, 1, 1e6);
  p.comm_wait = parallel.choice("comm_wait", p.comm_wait);
  p.first_bucket_mb = parallel.number("first_bucket_mb", p.first_bucket_mb, 0.001, 1e5);
  p.bucket_cap_mb = parallel.number("bucket_cap_mb", p.bucket_cap_mb, 0.001, 1e5);
  p.overlap = parallel.boolean("overlap", p.overlap);
  p.bf16_compression = parallel.boolean("bf16_compression", p.bf16_compression);
  p.zero = static_cast<int>(parallel.integer("zero", p.zero, 0, 1));
  p.check_replicas_every = parallel.integer("check_replicas_every", p.check_replicas_every, 0, kMax);
  p.merge_every = parallel.integer("merge_every", p.merge_every, 1, kMax);
  p.merge = parallel.choice("merge", p.merge);
  p.merge_mode = parallel.choice("merge_mode", p.merge_mode);
  p.merge_delay = parallel.integer("merge_delay", p.merge_delay, 0, kMax);
  p.merge_moments = parallel.boolean("merge_moments", p.merge_moments);
  p.outer_lr = parallel.number("outer_lr", p.outer_lr, 0.0, 100.0);
  p.outer_momentum = parallel.number("outer_momentum", p.outer_momentum, 0.0, 1.0);
  parallel.finish();
  if (p.zero == 1 && p.reducer != ReducerKind::kDdp) {
    throw ConfigError(fmt::format("{}: parallel.zero = 1 shards DDP's optimizer; it needs parallel.reducer = \"ddp\"",
                                  origins(root, path, {{"parallel", "zero"}, {"parallel", "reducer"}})));
  }

  SectionReader eval(root, "eval", resolved);
  EvalConfig& v = e.eval;
  v.interval = eval.integer("interval", v.interval, 0, kMax);
  v.samples = eval.integer("samples", v.samples, 1, std::int64_t{1} << 31);  // data::kMaxEvalSample
  v.final_eval = eval.choice("final", v.final_eval);
  v.test = eval.boolean("test", v.test);
  v.retired_batches = eval.retired("batches");
  v.prompt = eval.string("prompt", v.prompt);
  v.sample_tokens = eval.integer("sample_tokens", v.sample_tokens, 0, 1 << 20);
  v.temperature = eval.number("temperature", v.temperature, 1e-6, 100.0);
  v.top_k = eval.integer("top_k", v.top_k, 0, 1 << 20);
  eval.finish();

  SectionReader logging(root, "logging", resolved);
  e.logging.interval = logging.integer("interval", e.logging.interval, 1, kMax);
  logging.finish();

  SectionReader checkpoint(root, "checkpoint", resolved);
  CheckpointConfig& c = e.checkpoint;
  c.interval = checkpoint.integer("interval", c.interval, 0, kMax);
  c.keep = checkpoint.integer("keep", c.keep, 0, kMax);
  c.keep_best = checkpoint.boolean("keep_best", c.keep_best);
  c.async = checkpoint.boolean("async", c.async);
  c.sharded = checkpoint.boolean("sharded", c.sharded);
  const std::string resume = checkpoint.string("resume", "auto");
  c.resume = resume == "auto" ? ResumeMode::kAuto : resume == "never" ? ResumeMode::kNever : ResumeMode::kFile;
  if (c.resume == ResumeMode::kFile) c.resume_file = resume;
  c.signal = checkpoint.choice("signal", c.signal);
  checkpoint.finish();

  // [slurm] and [sweep] belong to jobgen; the trainer accepts them as they are.
  for (const char* passthrough : {"slurm", "sweep"}) {
    if (const toml::node* node = root.get(passthrough)) {
      if (!node->is_table()) {
        throw ConfigError(fmt::format("{}: [{}] must be a table", location(node->source()), passthrough));
      }
      resolved.insert_or_assign(passthrough, *node->as_table());
    }
  }

  std::ostringstream out;
  out << resolved;
  e.resolved_toml = out.str();
  return e;
}

}  // namespace

ExperimentSource::ExperimentSource(std::string path, std::vector<std::string> overrides)
    : path_(std::move(path)), text_(read_experiment_file(path_)), overrides_(std::move(overrides)) {}

toml::table ExperimentSource::table(const std::vector<std::string>& more) const {
  toml::table root = parse_toml_text(text_, path_);
  for (const auto& o : overrides_) apply_override(root, o);
  for (const auto& o : more) apply_override(root, o);
  return root;
}

Experiment ExperimentSource::resolve(const std::vector<std::string>& more) const {
  return config::resolve(table(more), path_, {});
}

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  return resolve(parse_toml_text(read_experiment_file(path), path), path, overrides);
}

Experiment load_experiment_text(const std::string& text, const std::string& origin,
                                const std::vector<std::string>& overrides) {
  return resolve(parse_toml_text(text, origin), origin, overrides);
}

}  // namespace hpctrain::config
