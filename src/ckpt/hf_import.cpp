#include "ckpt/hf_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ckpt/hf_layout.h"
#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/hf_weights.h"
#include "config/hf_model_config.h"
#include "support/staged_directory.h"
#include "support/text.h"

namespace hpctrain::ckpt {
namespace {

using ckpt_file::CheckpointError;

// GPT-2's and BERT's files name their tensors with or without the head
// model's prefix, "transformer." or "bert." (the hub's original gpt2 has none,
// a BertModel's files neither).
std::string stored_name(const ckpt_file::HfWeights& weights, const std::string& hf) {
  if (weights.find(hf).second != nullptr) return hf;
  for (const std::string prefix : {"transformer.", "bert."}) {
    if (hf.compare(0, prefix.size(), prefix) == 0) {
      std::string bare = hf.substr(prefix.size());
      if (weights.find(bare).second != nullptr) return bare;
    }
  }
  return hf;
}

// A tensor's values, all finite: a NaN or an infinity in a published model
// would make every loss NaN, so it is refused here, naming the tensor.
at::Tensor read_as_tensor(const ckpt_file::HfWeights& weights, const std::string& name) {
  const auto [file, entry] = weights.find(name);
  std::vector<float> values = file->read_float32(*entry);
  at::Tensor tensor = torch::from_blob(values.data(), entry->shape, torch::kFloat32).clone();
  const at::Tensor bad = torch::logical_not(torch::isfinite(tensor)).flatten();
  if (const std::int64_t count = bad.sum().item<std::int64_t>(); count > 0) {
    const std::int64_t first = bad.nonzero()[0].item<std::int64_t>();
    throw CheckpointError(
        fmt::format("{}: tensor {} holds {} non-finite value{} (NaN or infinity), the first {} at "
                    "flat index {}: hpctrain trains and evaluates finite weights only",
                    file->name(), support::printable(name), count, count == 1 ? "" : "s",
                    values[static_cast<std::size_t>(first)], first));
  }
  return tensor;
}

// The files' tensors against the configuration, from their headers: each
// tensor the layout names present with its HF shape, a tied tensor a file
// holds with its parameter's shape (before gigabytes of it are read), BERT's
// token types one row or more of d_model.
void check_shapes(const ckpt_file::HfWeights& weights, const config::HfModelConfig& hf,
                  const config::ModelConfig& config, std::int64_t vocab) {
  for (const auto& name : hf_layout(config)) {
    const std::string stored = stored_name(weights, name.hf);
    const auto [file, entry] = weights.find(stored);
    if (entry == nullptr) {
      throw CheckpointError(fmt::format("{}: no tensor {} (hpctrain's {})", weights.name(), name.hf, name.ours));
    }
    const std::vector<std::int64_t> expected = hf_shape(name, config, vocab);
    if (entry->shape == expected) continue;
    const bool embedding = name.ours == "tok_emb.weight" || name.ours == "lm_head.weight";
    throw CheckpointError(fmt::format(
        "{}: tensor {}: shape [{}], and hpctrain's {} is [{}]{}", file->name(), support::printable(stored),
        fmt::join(entry->shape, ", "), name.ours, fmt::join(expected, ", "),
        embedding && entry->shape.size() == 2 && entry->shape[1] == expected[1]
            ? fmt::format(" (a vocabulary of {} in the file and of {} in the tokenizer)", entry->shape[0], expected[0])
            : ""));
  }
  std::map<std::string, std::vector<std::int64_t>> ours;
  for (const auto& name : hf_layout(config)) {
    if (name.parts == 1) ours[name.ours] = hf_shape(HfTensorName{name.ours, name.ours, false, 0, 1}, config, vocab);
  }
  for (const auto& name : hf_tied(config)) {
    const std::string stored = stored_name(weights, name.hf);
    const auto [file, entry] = weights.find(stored);
    if (entry == nullptr || entry->shape == ours.at(name.ours)) continue;
    throw CheckpointError(
        fmt::format("{}: tensor {}: shape [{}], and {} ties it to hpctrain's {} of [{}] "
                    "(tie_word_embeddings)",
                    file->name(), support::printable(stored), fmt::join(entry->shape, ", "), hf.file, name.ours,
                    fmt::join(ours.at(name.ours), ", ")));
  }
  if (config.kind == config::ModelKind::kBert) {
    const std::string stored = stored_name(weights, kBertTokenTypes);
    if (const auto [file, entry] = weights.find(stored);
        entry != nullptr && (entry->shape.size() != 2 || entry->shape[0] < 1 || entry->shape[1] != config.d_model)) {
      throw CheckpointError(fmt::format("{}: tensor {}: shape [{}], and hpctrain adds one row of {} to its positions",
                                        file->name(), stored, fmt::join(entry->shape, ", "), config.d_model));
    }
  }
}

// config.json read and compared with `config`, under the export's lock.
config::HfModelConfig agreeing_config(const std::filesystem::path& dir, const config::ModelConfig& config) {
  config::HfModelConfig hf = config::read_hf_model_config(dir);
  if (const std::string difference = hf.difference(config); !difference.empty()) {
    throw CheckpointError(fmt::format("model.init_from: {}", difference));
  }
  return hf;
}

}  // namespace

void check_hf_weights(const std::filesystem::path& dir, const config::ModelConfig& config, std::int64_t vocab_size) {
  const support::DirectoryLock lock = support::DirectoryLock::read_lock(dir);
  const config::HfModelConfig hf = agreeing_config(dir, config);
  check_shapes(ckpt_file::HfWeights(dir), hf, config, vocab_size);
}

HfImport load_hf_weights(const std::filesystem::path& dir, const config::ModelConfig& config,
                         model::LanguageModel& model) {
  // An export moves into place whole under this lock (support/staged_directory.h):
  // its config.json and weights are read from one export, never two.
  const support::DirectoryLock lock = support::DirectoryLock::read_lock(dir);
  const config::HfModelConfig hf = agreeing_config(dir, config);
  const ckpt_file::HfWeights weights(dir);
  std::map<std::string, at::Tensor> parameters;
  for (const auto& item : model.named_parameters()) parameters[item.key()] = item.value();
  check_shapes(weights, hf, config, parameters.at("tok_emb.weight").size(0));

  std::set<std::string> used;
  std::set<std::string> dtypes;
  torch::NoGradGuard no_grad;
  for (const auto& name : hf_layout(config)) {
    const std::string stored = stored_name(weights, name.hf);
    const auto [file, entry] = weights.find(stored);
    at::Tensor& whole = parameters.at(name.ours);
    at::Tensor parameter = name.parts > 1 ? whole.chunk(name.parts, 0)[name.part] : whole;  // a view
    std::vector<std::int64_t> expected = parameter.sizes().vec();
    if (name.transposed) std::swap(expected[0], expected[1]);
    if (entry->shape != expected) {  // check_shapes passed: hf_shape and the model disagree
      throw std::logic_error(fmt::format("hf_shape gives {} [{}], and the model built has [{}]", name.ours,
                                         fmt::join(entry->shape, ", "), fmt::join(expected, ", ")));
    }
    const at::Tensor value = read_as_tensor(weights, stored);
    parameter.copy_(name.transposed ? value.t() : value);
    used.insert(stored);
    dtypes.insert(ckpt_file::dtype_name(entry->dtype));
  }
  if (config.kind == config::ModelKind::kBert) {
    // Token type 0 is added to every position, as HF's embeddings add it.
    const std::string stored = stored_name(weights, kBertTokenTypes);
    if (const auto [file, entry] = weights.find(stored); entry != nullptr) {
      parameters.at("pos_emb.weight").add_(read_as_tensor(weights, stored)[0]);
      used.insert(stored);
      dtypes.insert(ckpt_file::dtype_name(entry->dtype));
    }
  }
  // What else the files hold: buffers we recompute, tied tensors (which must
  // equal their parameter), or something this model has no place for.
  std::map<std::string, std::string> tied;
  for (const auto& name : hf_tied(config)) tied[stored_name(weights, name.hf)] = name.ours;
  for (const auto& name : weights.names()) {
    if (used.count(name) != 0 || is_hf_unused(name)) continue;
    if (const auto it = tied.find(name); it != tied.end()) {
      const at::Tensor theirs = read_as_tensor(weights, name);
      if (!torch::equal(theirs, parameters.at(it->second).cpu())) {
        throw CheckpointError(
            fmt::format("{}: {} differs from {}, and {} ties them (tie_word_embeddings): hpctrain's model would "
                        "compute another function",
                        weights.name(), name, it->second, hf.file));
      }
      continue;
    }
    throw CheckpointError(fmt::format("{}: tensor {} has no place in hpctrain's {} model", weights.name(),
                                      support::printable(name), config::name_of(config.kind)));
  }
  return {used.size(), fmt::format("{}", fmt::join(dtypes, " and "))};
}

}  // namespace hpctrain::ckpt
