#include "config/hf_model_config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config_error.h"
#include "config/section_reader.h"
#include "config/toml_input.h"
#include "support/bounded_file.h"
#include "support/json_text.h"
#include "support/text.h"

namespace hpctrain::config {
namespace {

constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;
constexpr int kMaxConfigDepth = 16;

class JsonFields {
 public:
  JsonFields(const nlohmann::json& json, std::string file) : json_(json), file_(std::move(file)) {}

  [[nodiscard]] bool has(const char* key) const { return json_.contains(key) && !json_[key].is_null(); }

  std::int64_t integer(const char* key, std::int64_t min, std::int64_t max) const {
    if (!has(key)) throw ConfigError(fmt::format("{}: no {}", file_, key));
    return integer_value(key, min, max);
  }
  std::int64_t integer(const char* key, std::int64_t fallback, std::int64_t min, std::int64_t max) const {
    return has(key) ? integer_value(key, min, max) : fallback;
  }
  double number(const char* key, double fallback, double min, double max) const {
    if (!has(key)) return fallback;
    const auto& v = json_[key];
    if (!v.is_number()) throw ConfigError(fmt::format("{}: {} is not a number", file_, key));
    const double d = v.get<double>();
    if (!(d >= min && d <= max))
      throw ConfigError(fmt::format("{}: {} = {} is outside [{}, {}]", file_, key, d, min, max));
    return d;
  }
  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!json_[key].is_boolean()) throw ConfigError(fmt::format("{}: {} is not true or false", file_, key));
    return json_[key].get<bool>();
  }
  std::string string(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!json_[key].is_string()) throw ConfigError(fmt::format("{}: {} is not a string", file_, key));
    return json_[key].get<std::string>();
  }
  // An optional width (an MLP's) must be the one hpctrain's model computes.
  void require_width(const char* key, std::int64_t computed, const char* why) const {
    if (!has(key)) return;
    const std::int64_t width = integer_value(key, 1, 1 << 20);
    if (width != computed)
      throw ConfigError(fmt::format("{}: {} {}: hpctrain's {} ({})", file_, key, width, why, computed));
  }
  // A field hpctrain's model has no counterpart for must hold the value it computes.
  void require(const char* key, const nlohmann::json& computed, const char* why) const {
    if (has(key) && json_[key] != computed) {
      throw ConfigError(fmt::format("{}: {} = {}: hpctrain's model {}", file_, key,
                                    support::printable(json_[key].dump().substr(0, 64)), why));
    }
  }

 private:
  std::int64_t integer_value(const char* key, std::int64_t min, std::int64_t max) const {
    const auto& v = json_[key];
    if (!v.is_number_integer()) throw ConfigError(fmt::format("{}: {} is not an integer", file_, key));
    // As written, not as int64_t: 2^63 and above would print wrapped negative.
    const bool too_large = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
    if (too_large || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max) {
      throw ConfigError(fmt::format("{}: {} = {} is outside [{}, {}]", file_, key, v.dump(), min, max));
    }
    return v.get<std::int64_t>();
  }
  const nlohmann::json& json_;
  std::string file_;
};

void read_llama(const JsonFields& f, HfModelConfig& c) {
  c.kind = ModelKind::kLlama;
  c.d_model = f.integer("hidden_size", 1, 1 << 16);
  c.n_layer = f.integer("num_hidden_layers", 1, 1024);
  c.n_head = f.integer("num_attention_heads", 1, 1024);
  c.n_kv_head = f.integer("num_key_value_heads", c.n_head, 1, 1024);
  c.d_ff = f.integer("intermediate_size", 1, 1 << 20);
  c.rope_theta = f.number("rope_theta", 10000.0, 1.0, 1e12);
  c.norm_eps = f.number("rms_norm_eps", 1e-6, 0.0, 1.0);
  c.tie_embeddings = f.boolean("tie_word_embeddings", false);
  c.vocab_size = f.integer("vocab_size", 1, 1 << 24);
  f.require("hidden_act", "silu", "uses SiLU in its gated MLP");
  f.require("attention_bias", false, "has no biases");
  f.require("mlp_bias", false, "has no biases");
  if (f.has("rope_scaling")) {
    throw ConfigError(
        fmt::format("{}: rope_scaling: hpctrain's RoPE has no scaling (remove it or set it to null)", c.file));
  }
  if (f.has("head_dim") && c.n_head > 0 && f.integer("head_dim", 1, 1 << 16) * c.n_head != c.d_model) {
    throw ConfigError(
        fmt::format("{}: head_dim {} times num_attention_heads {} is not hidden_size {}: hpctrain's "
                    "heads split the hidden size",
                    c.file, f.integer("head_dim", 1, 1 << 16), c.n_head, c.d_model));
  }
}

void read_gpt2(const JsonFields& f, HfModelConfig& c) {
  c.kind = ModelKind::kGpt;
  c.d_model = f.integer("n_embd", 1, 1 << 16);
  c.n_layer = f.integer("n_layer", 1, 1024);
  c.n_head = f.integer("n_head", 1, 1024);
  c.positions = f.integer("n_positions", 1, 1 << 20);
  c.vocab_size = f.integer("vocab_size", 1, 1 << 24);
  c.tie_embeddings = true;  // GPT2LMHeadModel's output layer is the token embedding
  f.require_width("n_inner", 4 * c.d_model, "GPT MLP is 4 x n_embd wide");
  f.require("activation_function", "gelu_new", "uses GELU's tanh approximation (gelu_new)");
  f.require("layer_norm_epsilon", 1e-5, "uses LayerNorm's epsilon 1e-5");
  f.require("scale_attn_weights", true, "scales attention by 1/sqrt(head size)");
  f.require("scale_attn_by_inverse_layer_idx", false, "does not scale attention by layer");
  f.require("tie_word_embeddings", true, "ties the output layer to the token embedding");
}

void read_bert(const JsonFields& f, HfModelConfig& c) {
  c.kind = ModelKind::kBert;
  c.d_model = f.integer("hidden_size", 1, 1 << 16);
  c.n_layer = f.integer("num_hidden_layers", 1, 1024);
  c.n_head = f.integer("num_attention_heads", 1, 1024);
  c.positions = f.integer("max_position_embeddings", 1, 1 << 20);
  c.vocab_size = f.integer("vocab_size", 1, 1 << 24);
  c.tie_embeddings = true;  // BertForMaskedLM's decoder is the word embedding
  f.require_width("intermediate_size", 4 * c.d_model, "bert MLP is 4 x hidden_size wide");
  const std::string act = f.string("hidden_act", "gelu");
  if (act != "gelu_new" && act != "gelu_pytorch_tanh") {
    throw ConfigError(
        fmt::format("{}: hidden_act = \"{}\": hpctrain's model uses GELU's tanh approximation (gelu_new, "
                    "gelu_pytorch_tanh){}",
                    c.file, support::printable(act.substr(0, 64)),
                    act == "gelu" ? ", and \"gelu\" is the exact (erf) GELU, another function" : ""));
  }
  f.require("layer_norm_eps", 1e-5, "uses LayerNorm's epsilon 1e-5");
  f.require("position_embedding_type", "absolute", "learns absolute position embeddings");
  f.require("is_decoder", false, "is a bidirectional encoder");
  f.require("add_cross_attention", false, "has no cross-attention");
  f.require("tie_word_embeddings", true, "ties the MLM decoder to the word embedding");
}

bool same(const toml::node& a, const toml::node& b) {
  if (a.is_number() && b.is_number()) {
    return a.value<double>() == b.value<double>() && a.is_integer() == b.is_integer();
  }
  if (a.is_boolean() && b.is_boolean()) return a.value<bool>() == b.value<bool>();
  if (a.is_string() && b.is_string()) return a.value<std::string>() == b.value<std::string>();
  return false;
}

std::string toml_text(const toml::node& node) {
  std::ostringstream out;
  node.visit([&out](const auto& value) { out << value; });
  return out.str();
}

}  // namespace

toml::table HfModelConfig::model_keys() const {
  toml::table keys;
  keys.insert("kind", name_of(kind));
  keys.insert("n_layer", n_layer);
  keys.insert("n_head", n_head);
  keys.insert("d_model", d_model);
  if (kind == ModelKind::kLlama) {
    keys.insert("n_kv_head", n_kv_head);
    keys.insert("d_ff", d_ff);
    keys.insert("rope_theta", rope_theta);
    keys.insert("norm_eps", norm_eps);
    keys.insert("tie_embeddings", tie_embeddings);
  } else {
    keys.insert("max_seq_len", positions);
  }
  if (kind == ModelKind::kBert) keys.insert("norm_position", name_of(NormPosition::kPost));
  return keys;
}

std::string HfModelConfig::difference(const ModelConfig& m) const {
  const auto differs = [this](const char* key, auto here, auto there, const char* field) {
    return fmt::format("model.{} = {} here, {} = {} in {}", key, here, field, there, file);
  };
  if (m.kind != kind) return differs("kind", name_of(m.kind), name_of(kind), "model_type");
  if (m.n_layer != n_layer) return differs("n_layer", m.n_layer, n_layer, "the layer count");
  if (m.n_head != n_head) return differs("n_head", m.n_head, n_head, "the head count");
  if (m.d_model != d_model) return differs("d_model", m.d_model, d_model, "the hidden size");
  if (kind == ModelKind::kGpt && m.max_seq_len != positions) {
    return differs("max_seq_len", m.max_seq_len, positions, "n_positions");
  }
  if (kind == ModelKind::kBert && m.max_seq_len != positions) {
    return differs("max_seq_len", m.max_seq_len, positions, "max_position_embeddings");
  }
  if (kind == ModelKind::kBert && m.norm_position != NormPosition::kPost) {
    return differs("norm_position", name_of(m.norm_position), "post-LayerNorm", "BertForMaskedLM");
  }
  if (kind == ModelKind::kLlama) {
    if (m.n_kv_head != n_kv_head) return differs("n_kv_head", m.n_kv_head, n_kv_head, "num_key_value_heads");
    if (m.d_ff != d_ff) return differs("d_ff", m.d_ff, d_ff, "intermediate_size");
    if (m.rope_theta != rope_theta) return differs("rope_theta", m.rope_theta, rope_theta, "rope_theta");
    if (m.norm_eps != norm_eps) return differs("norm_eps", m.norm_eps, norm_eps, "rms_norm_eps");
    if (m.tie_embeddings != tie_embeddings) {
      return differs("tie_embeddings", m.tie_embeddings, tie_embeddings, "tie_word_embeddings");
    }
  }
  return {};
}

HfModelConfig read_hf_model_config(const std::filesystem::path& dir) {
  HfModelConfig c;
  c.file = (dir / "config.json").string();
  nlohmann::json json;
  try {
    json = support::parse_json_text(support::read_bounded_file(c.file, kMaxConfigBytes, "model config"), c.file,
                                    kMaxConfigDepth);
  } catch (const support::InputError& e) {
    throw ConfigError(fmt::format("model.init_from: {}", e.what()));
  }
  if (!json.is_object()) throw ConfigError(fmt::format("{}: not a JSON object", c.file));
  const JsonFields fields(json, c.file);
  const std::string type = fields.string("model_type", "");
  if (type == "llama") {
    read_llama(fields, c);
  } else if (type == "gpt2") {
    read_gpt2(fields, c);
  } else if (type == "bert") {
    read_bert(fields, c);
  } else {
    throw ConfigError(
        fmt::format("{}: model_type '{}': hpctrain reads llama (LlamaForCausalLM), gpt2 "
                    "(GPT2LMHeadModel) and bert (BertForMaskedLM)",
                    c.file, support::printable(type.substr(0, 64))));
  }
  if (c.d_model % c.n_head != 0 || (c.kind == ModelKind::kLlama && c.n_head % c.n_kv_head != 0)) {
    throw ConfigError(fmt::format("{}: the hidden size {} over {} heads ({} key/value heads) does not divide evenly",
                                  c.file, c.d_model, c.n_head, c.n_kv_head));
  }
  return c;
}

namespace {

// The [model] keys model.init_from gives for a model of `kind`.
std::vector<const char*> init_from_keys(const std::optional<std::string>& kind) {
  std::vector<const char*> keys = {"kind", "n_layer", "n_head", "d_model"};
  if (kind == "llama") keys.insert(keys.end(), {"n_kv_head", "d_ff", "rope_theta", "norm_eps", "tie_embeddings"});
  if (kind == "gpt") keys.push_back("max_seq_len");
  if (kind == "bert") keys.insert(keys.end(), {"max_seq_len", "norm_position"});
  return keys;
}

// [model] KEY from `source` (what errors call it): inserted where the
// experiment leaves it out, else it must be the same value.
void fill_model_key(toml::table& model, std::string_view key, const toml::node& value, const std::string& source,
                    std::string_view advice) {
  if (const toml::node* set = model.get(key)) {
    if (!same(*set, value)) {
      throw ConfigError(fmt::format("{}: model.{} = {}, and {} says {}{}", location(set->source()), key,
                                    toml_text(*set), source, toml_text(value), advice));
    }
  } else {
    model.insert(key, value);
  }
}

// data.tokenizer = `path`, [data] made where the experiment has none.
void set_data_tokenizer(toml::table& root, const std::string& path) {
  if (root["data"].as_table() == nullptr) root.insert("data", toml::table{});
  root["data"].as_table()->insert("tokenizer", path);
}

// A run whose model.init_from directory is gone (a requeued job whose base
// model was on node-local scratch) continues from its own checkpoint, which
// never reads the directory: [model] and data.tokenizer come from the config
// the run stored when it started (RUN_DIR/config.toml), where the directory
// filled them in. False where the run stored none for this same directory;
// the directory is then read, and its absence named. A run that finds no
// checkpoint to resume from still needs the weights and says so.
bool fill_from_stored_config(toml::table& model, toml::table& root, const std::string& from,
                             const std::filesystem::path& run_dir) {
  const std::filesystem::path stored_file = run_dir / "config.toml";
  std::error_code ec;
  if (!std::filesystem::is_regular_file(stored_file, ec)) return false;
  const toml::table stored = parse_toml_file(stored_file);
  const toml::table* stored_model = stored["model"].as_table();
  if (stored_model == nullptr || (*stored_model)["init_from"].value<std::string>() != from) return false;
  for (const char* key : init_from_keys((*stored_model)["kind"].value<std::string>())) {
    const toml::node* value = stored_model->get(key);
    if (value == nullptr) {
      throw ConfigError(fmt::format("{}: [model] has no {}, which model.init_from = {} gave when the run started",
                                    stored_file.string(), key, from));
    }
    fill_model_key(model, key, *value,
                   fmt::format("this run's {} (from model.init_from, now gone)", stored_file.string()), "");
  }
  const toml::table* data = root["data"].as_table();
  if (data == nullptr || !data->contains("tokenizer")) {
    if (const auto tokenizer = stored["data"]["tokenizer"].value<std::string>()) set_data_tokenizer(root, *tokenizer);
  }
  return true;
}

}  // namespace

void apply_init_from(toml::table& root, const std::filesystem::path& run_dir) {
  toml::table* model = root["model"].as_table();
  if (model == nullptr) return;
  const auto from = (*model)["init_from"].value<std::string>();
  if (!from || from->empty()) return;
  const std::filesystem::path dir = *from;

  // Which keys the directory would give, without reading it: all of them
  // for the kind it turns out to be are then already set.
  const auto kind = (*model)["kind"].value<std::string>();
  const toml::table* data = root["data"].as_table();
  const bool tokenizer_set = data != nullptr && data->contains("tokenizer");
  bool complete = tokenizer_set && kind.has_value();
  for (const char* key : init_from_keys(kind)) complete = complete && model->contains(key);
  if (complete) return;

  std::error_code gone;
  if (!std::filesystem::exists(dir, gone) && !gone && fill_from_stored_config(*model, root, *from, run_dir)) return;

  const HfModelConfig hf = read_hf_model_config(dir);
  for (const auto& [key, value] : hf.model_keys()) {
    fill_model_key(*model, key.str(), value, "model.init_from's " + hf.file, ": leave it out or agree");
  }
  if (!tokenizer_set) {
    const std::filesystem::path tokenizer = dir / "tokenizer.model";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(tokenizer, ec)) {
      throw ConfigError(fmt::format(
          "model.init_from: {} has no tokenizer.model: hpctrain reads SentencePiece tokenizers (the Llama family's); "
          "a tokenizer.json or vocab.json and merges.txt is not read. Set data.tokenizer to the SentencePiece "
          "model these weights were trained with",
          dir.string()));
    }
    set_data_tokenizer(root, tokenizer.string());
  }
}

}  // namespace hpctrain::config
