#include "config/experiment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <sstream>

#include "config/config_error.h"
#include "config/section_reader.h"

namespace hpctrain::config {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
const std::vector<std::string> kSections = {"job", "data"};

toml::table parse_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path)) throw ConfigError(fmt::format("{}: no such experiment file", path));
  try {
    return toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}: {}", location(e.source()), e.description()));
  }
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

// "section.key=value": the value is TOML ("4096", "true", "[\"a\"]", "'x'") or,
// when it does not parse as TOML, a bare string.
void apply_override(toml::table& root, const std::string& text) {
  const auto eq = text.find('=');
  const std::string key_path = text.substr(0, eq);
  const auto dot = key_path.find('.');
  if (eq == std::string::npos || dot == std::string::npos || key_path.find('.', dot + 1) != std::string::npos ||
      dot == 0 || dot + 1 == key_path.size()) {
    throw ConfigError(fmt::format("--set {}: expected section.key=value", text));
  }
  const std::string section = key_path.substr(0, dot);
  const std::string key = key_path.substr(dot + 1);
  const std::string value = text.substr(eq + 1);
  const std::string origin = "--set " + text;
  if (!root.contains(section)) root.insert(section, toml::table{});
  toml::table* target = root.get(section)->as_table();
  if (target == nullptr) throw ConfigError(fmt::format("{}: [{}] is not a table", origin, section));
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + value, origin);
  } catch (const toml::parse_error&) {
    parsed = toml::parse("v = " + toml_string(value), origin);
  }
  // Keeps the parsed node, and with it its origin for error messages.
  parsed.get("v")->visit([&](auto&& node) { target->insert_or_assign(key, std::move(node)); });
}

}  // namespace

Experiment load_experiment(const std::string& path, const std::vector<std::string>& overrides) {
  toml::table root = parse_file(path);
  for (const auto& o : overrides) apply_override(root, o);

  for (const auto& [name, node] : root) {
    if (std::find(kSections.begin(), kSections.end(), name.str()) != kSections.end()) continue;
    const std::string hint = closest_match(name.str(), kSections);
    if (!node.is_table()) {
      throw ConfigError(fmt::format("{}: key '{}' is outside any section (sections: [{}])", location(node.source()),
                                    name.str(), fmt::join(kSections, "], [")));
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
  job.finish();

  SectionReader data(root, "data", resolved);
  DataConfig& d = e.data;
  d.sources = data.strings("sources", d.sources);
  d.glob = data.string("glob", d.glob);
  d.recursive = data.boolean("recursive", d.recursive);
  d.format = data.choice("format", d.format, {"auto", "text", "jsonl"});
  d.text_field = data.string("text_field", d.text_field);
  d.on_bad_input = data.choice("on_bad_input", d.on_bad_input, {"skip", "error"});
  d.min_document_bytes = data.integer("min_document_bytes", d.min_document_bytes, 0, kMax);
  d.max_document_bytes = data.integer("max_document_bytes", d.max_document_bytes, 1, kMax);
  d.deduplicate = data.boolean("deduplicate", d.deduplicate);
  d.validation_fraction = data.number("validation_fraction", d.validation_fraction, 0.0, 0.5);
  d.dir = data.string("dir", "data/" + e.job.name);
  d.tokenizer = data.string("tokenizer", d.tokenizer);
  d.tokenizer_model = data.choice("tokenizer_model", d.tokenizer_model, {"bpe", "unigram"});
  d.vocab_size = data.integer("vocab_size", d.vocab_size, 300, 1 << 20);
  d.tokenizer_max_lines = data.integer("tokenizer_max_lines", d.tokenizer_max_lines, 1000, kMax);
  d.threads = data.integer("threads", d.threads, 0, 1024);
  d.seq_len = data.integer("seq_len", d.seq_len, 1, 1 << 20);
  d.mlm_probability = data.number("mlm_probability", d.mlm_probability, 0.0, 1.0);
  d.mlm_mask_fraction = data.number("mlm_mask_fraction", d.mlm_mask_fraction, 0.0, 1.0);
  d.mlm_random_fraction = data.number("mlm_random_fraction", d.mlm_random_fraction, 0.0, 1.0);
  data.finish();
  if (d.mlm_mask_fraction + d.mlm_random_fraction > 1.0) {
    throw ConfigError(fmt::format("{}: data.mlm_mask_fraction + data.mlm_random_fraction = {} exceeds 1", path,
                                  d.mlm_mask_fraction + d.mlm_random_fraction));
  }
  if (d.min_document_bytes > d.max_document_bytes) {
    throw ConfigError(fmt::format("{}: data.min_document_bytes {} exceeds data.max_document_bytes {}", path,
                                  d.min_document_bytes, d.max_document_bytes));
  }

  std::ostringstream out;
  out << resolved;
  e.resolved_toml = out.str();
  return e;
}

}  // namespace hpctrain::config
