#include "ckpt/hf_export.h"

#include <fmt/format.h>
#include <torch/types.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "ckpt/checkpoint.h"
#include "ckpt/hf_layout.h"
#include "ckpt/safetensors_writer.h"
#include "config/experiment.h"
#include "support/bounded_file.h"
#include "support/build_info.h"
#include "support/json_text.h"
#include "support/no_follow.h"
#include "support/staged_directory.h"
#include "support/text.h"

namespace hpctrain::ckpt {
namespace {

constexpr const char* kExportMarker = "hpctrain_export";  // config.json's key saying who wrote the directory

// hpctrain's SentencePiece pieces (data/tokenizer.h): <unk> 0, <s> 1, </s> 2, <pad> 3, <mask> 4.
constexpr int kBos = 1, kEos = 2, kPad = 3;

bool is_earlier_export(const std::filesystem::path& dir) {
  try {
    const auto json = support::parse_json_text(
        support::read_bounded_file(dir / "config.json", std::size_t{1} << 20, "model config"), "config.json", 16);
    return json.is_object() && json.contains(kExportMarker);
  } catch (const support::InputError&) {
    return false;
  }
}

// Every file an export writes: all that an earlier export is replaced with.
const std::set<std::string>& export_files() {
  static const std::set<std::string> files = {"model.safetensors", "config.json",           "generation_config.json",
                                              "tokenizer.model",   "tokenizer_config.json", "special_tokens_map.json"};
  return files;
}

// The directory named by --out, without a trailing '/' ("new/" is "new").
std::filesystem::path destination_of(const std::filesystem::path& out) {
  if (out.empty()) throw CheckpointError("ckpt export --out: an empty path; name the directory to write");
  std::filesystem::path dir = out.lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  if (dir.empty() || dir.filename() == "." || dir.filename() == "..") {
    throw CheckpointError(fmt::format("ckpt export --out {}: name the directory to write, not {}", out.string(),
                                      dir.empty() ? "the root" : dir.filename().string()));
  }
  return dir;
}

// What may be replaced by the new export: an empty directory, or an earlier
// export holding nothing but an export's files. Asked before the export is
// written (so that a refusal costs nothing) and again under the lock.
void check_replaceable(const std::filesystem::path& dir) {
  const support::FileKind there = support::file_kind_at(dir);
  if (there == support::FileKind::kNothing) return;
  if (there != support::FileKind::kDirectory) {
    throw CheckpointError(fmt::format("{}: {} stands there; --format hf writes a directory (name a new one)",
                                      dir.string(), support::describe(there)));
  }
  std::error_code ec;
  if (std::filesystem::is_empty(dir, ec)) return;
  if (!is_earlier_export(dir)) {
    throw CheckpointError(fmt::format(
        "{}: holds other files and no earlier hpctrain export: ckpt export replaces nothing else (name a new "
        "directory)",
        dir.string()));
  }
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (export_files().count(name) == 0) {
      throw CheckpointError(
          fmt::format("{}: an earlier export, but it also holds {}, which an export does not "
                      "write: move it away or name a new directory",
                      dir.string(), support::printable(name)));
    }
  }
}

nlohmann::json gpt2_config(const config::ModelConfig& m, std::int64_t vocab) {
  return {{"architectures", {hf_architecture(m)}},
          {"model_type", "gpt2"},
          {"vocab_size", vocab},
          {"n_positions", m.max_seq_len},
          {"n_embd", m.d_model},
          {"n_layer", m.n_layer},
          {"n_head", m.n_head},
          {"n_inner", nullptr},
          {"activation_function", "gelu_new"},
          {"layer_norm_epsilon", 1e-5},
          {"resid_pdrop", 0.0},
          {"embd_pdrop", 0.0},
          {"attn_pdrop", 0.0},
          {"scale_attn_weights", true},
          {"scale_attn_by_inverse_layer_idx", false},
          {"reorder_and_upcast_attn", false},
          {"initializer_range", m.init_std},
          {"tie_word_embeddings", true},
          {"use_cache", true}};
}

nlohmann::json llama_config(const config::ModelConfig& m, std::int64_t vocab) {
  return {{"architectures", {hf_architecture(m)}},
          {"model_type", "llama"},
          {"vocab_size", vocab},
          {"hidden_size", m.d_model},
          {"intermediate_size", m.d_ff},
          {"num_hidden_layers", m.n_layer},
          {"num_attention_heads", m.n_head},
          {"num_key_value_heads", m.n_kv_head},
          {"head_dim", m.d_model / m.n_head},
          {"hidden_act", "silu"},
          {"max_position_embeddings", m.max_seq_len},
          {"rms_norm_eps", m.norm_eps},
          {"rope_theta", m.rope_theta},
          {"rope_scaling", nullptr},
          {"attention_bias", false},
          {"attention_dropout", 0.0},
          {"mlp_bias", false},
          {"pretraining_tp", 1},
          {"initializer_range", m.init_std},
          {"tie_word_embeddings", m.tie_embeddings},
          {"use_cache", true}};
}

nlohmann::json bert_config(const config::ModelConfig& m, std::int64_t vocab) {
  return {{"architectures", {hf_architecture(m)}},
          {"model_type", "bert"},
          {"vocab_size", vocab},
          {"hidden_size", m.d_model},
          {"num_hidden_layers", m.n_layer},
          {"num_attention_heads", m.n_head},
          {"intermediate_size", 4 * m.d_model},
          {"hidden_act", "gelu_new"},
          {"hidden_dropout_prob", 0.0},
          {"attention_probs_dropout_prob", 0.0},
          {"max_position_embeddings", m.max_seq_len},
          {"type_vocab_size", 1},
          {"initializer_range", m.init_std},
          {"layer_norm_eps", 1e-5},
          {"position_embedding_type", "absolute"},
          {"is_decoder", false},
          {"tie_word_embeddings", true},
          {"use_cache", false}};
}

nlohmann::json hf_config(const config::ModelConfig& m, std::int64_t vocab) {
  switch (m.kind) {
    case config::ModelKind::kLlama: return llama_config(m, vocab);
    case config::ModelKind::kBert: return bert_config(m, vocab);
    default: return gpt2_config(m, vocab);
  }
}

}  // namespace

ExportResult export_hf(const HfExportRequest& request) {
  const StoredCheckpoint file(request.checkpoint);
  const ckpt_file::CheckpointInfo info = ckpt_file::read_checkpoint_info(file.index());
  const config::Experiment& experiment = request.experiment;
  const config::ModelConfig& m = experiment.model;
  const std::vector<HfTensorName> layout = hf_layout(m);  // refuses a pre-LayerNorm bert and mlp, naming why
  const std::filesystem::path destination = destination_of(request.out_dir);
  check_replaceable(destination);
  // Written whole beside the destination, then moved into place under a lock:
  // a failure half-way (a full disk) leaves the destination as it was, and
  // two exports at once leave one of them, whole.
  support::StagedDirectory staged(destination, "export");

  std::vector<std::pair<std::string, at::Tensor>> tensors;
  tensors.reserve(layout.size() + 1);
  for (const auto& name : layout) {
    at::Tensor t = read_tensor(file, fmt::format("{}/{}", request.group, name.ours));
    if (name.parts > 1) t = t.chunk(name.parts, 0)[name.part].contiguous();
    tensors.emplace_back(name.hf, name.transposed ? t.t().contiguous() : t);
  }
  const bool bert = m.kind == config::ModelKind::kBert;
  if (bert) {  // one token type, adding nothing: what hpctrain's embeddings compute
    tensors.insert(tensors.begin() + 2, {kBertTokenTypes, torch::zeros({1, m.d_model}, torch::kFloat32)});
  }
  const std::int64_t vocab = tensors.front().second.size(0);  // the token embedding's rows
  const auto install = [&staged](const std::string& name) {
    return [&staged, name](const std::filesystem::path& tmp) {
      if (!support::rename_unless_taken(tmp, staged.path() / name)) {
        throw CheckpointError(fmt::format("{}: appeared in the export's own staging directory", name));
      }
      staged.wrote(name);
    };
  };
  const std::filesystem::path& dir = staged.path();
  const std::size_t bytes =
      write_safetensors(dir / "model.safetensors", tensors,
                        {{"format", "pt"},
                         {"hpctrain_step", std::to_string(info.step)},
                         {"hpctrain_weights", request.group == "model" ? "trained" : request.group},
                         {"hpctrain_git_commit", info.git_commit}},
                        install("model.safetensors"));

  nlohmann::json config = hf_config(m, vocab);
  config["torch_dtype"] = "float32";
  if (request.tokenizer_model) {
    config["bos_token_id"] = kBos;
    config["eos_token_id"] = kEos;
    config["pad_token_id"] = kPad;
  }
  config[kExportMarker] = {{"step", info.step},
                           {"weights", request.group == "model" ? "trained" : request.group},
                           {"checkpoint", file.name()},
                           {"trained_by", info.git_commit},
                           {"exported_by", support::commit_with_state()}};
  write_file_atomically(dir / "config.json", config.dump(2) + "\n", install("config.json"));

  if (!bert) {  // a masked language model does not generate
    nlohmann::json generation = {
        {"do_sample", true}, {"temperature", experiment.eval.temperature}, {"top_k", experiment.eval.top_k}};
    if (request.tokenizer_model) {
      generation["bos_token_id"] = kBos;
      generation["eos_token_id"] = kEos;
      generation["pad_token_id"] = kPad;
    }
    write_file_atomically(dir / "generation_config.json", generation.dump(2) + "\n", install("generation_config.json"));
  }

  if (request.tokenizer_model) {
    write_file_atomically(dir / "tokenizer.model", *request.tokenizer_model, install("tokenizer.model"));
    // hpctrain encodes text as SentencePiece does, with no <s> in front and
    // no piece added for a leading space: HF's slow LlamaTokenizer in its
    // legacy mode does the same.
    nlohmann::json tokenizer = {{"tokenizer_class", "LlamaTokenizer"},
                                {"model_max_length", m.max_seq_len},
                                {"bos_token", "<s>"},
                                {"eos_token", "</s>"},
                                {"unk_token", "<unk>"},
                                {"pad_token", "<pad>"},
                                {"add_bos_token", false},
                                {"add_eos_token", false},
                                {"add_prefix_space", false},
                                {"legacy", true},
                                {"clean_up_tokenization_spaces", false}};
    nlohmann::json special = {
        {"bos_token", "<s>"}, {"eos_token", "</s>"}, {"unk_token", "<unk>"}, {"pad_token", "<pad>"}};
    if (bert) {  // what a fill-mask pipeline puts where a token is to be predicted
      tokenizer["mask_token"] = "<mask>";
      special["mask_token"] = "<mask>";
    }
    write_file_atomically(dir / "tokenizer_config.json", tokenizer.dump(2) + "\n", install("tokenizer_config.json"));
    write_file_atomically(dir / "special_tokens_map.json", special.dump(2) + "\n", install("special_tokens_map.json"));
  }
  staged.install(check_replaceable, export_files());
  return {tensors.size(), bytes};
}

}  // namespace hpctrain::ckpt
