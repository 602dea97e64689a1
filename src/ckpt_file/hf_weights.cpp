#include "ckpt_file/hf_weights.h"

#include <fmt/format.h>

#include "ckpt_file/checkpoint_error.h"
#include "support/bounded_file.h"
#include "support/json_text.h"
#include "support/text.h"

namespace hpctrain::ckpt_file {
namespace {

constexpr std::size_t kMaxIndexBytes = std::size_t{64} << 20;
constexpr int kMaxIndexDepth = 4;
constexpr std::size_t kMaxIndexShards = 100000;

// A shard is named by the index, which came from elsewhere: only a plain file
// of the model's own directory.
bool plain_shard_name(const std::string& file) {
  return !file.empty() && file.size() <= 255 && file.front() != '.' && file.find('/') == std::string::npos &&
         file.find('\0') == std::string::npos && file.ends_with(".safetensors");
}

}  // namespace

HfWeights::HfWeights(const std::filesystem::path& dir) {
  const std::filesystem::path single = dir / "model.safetensors";
  const std::filesystem::path index = dir / "model.safetensors.index.json";
  std::error_code ec;
  if (std::filesystem::exists(single, ec) || !std::filesystem::exists(index, ec)) {
    if (!std::filesystem::exists(single, ec)) {
      throw CheckpointError(fmt::format(
          "{}: no model.safetensors and no model.safetensors.index.json (hpctrain reads safetensors weights only; "
          "a pytorch_model.bin must be converted first)",
          dir.string()));
    }
    files_.push_back(std::make_unique<SafetensorsFile>(single));
    name_ = files_.back()->name();
    for (const auto& entry : files_.back()->entries()) tensors_[entry.name] = {files_.back().get(), &entry};
    return;
  }
  name_ = index.string();
  nlohmann::json json;
  try {
    json = support::parse_json_text(support::read_bounded_file(index, kMaxIndexBytes, "safetensors index"), name_,
                                    kMaxIndexDepth);
  } catch (const support::InputError& e) {
    throw CheckpointError(e.what());
  }
  if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object()) {
    throw CheckpointError(fmt::format("{}: no weight_map object", name_));
  }
  std::map<std::string, const SafetensorsFile*> opened;
  for (const auto& [tensor, file_value] : json["weight_map"].items()) {
    if (!file_value.is_string()) {
      throw CheckpointError(fmt::format("{}: weight_map {}: not a file name", name_, support::printable(tensor)));
    }
    const auto& file = file_value.get_ref<const std::string&>();
    if (!plain_shard_name(file)) {
      throw CheckpointError(fmt::format("{}: weight_map {}: {} is not a .safetensors file of this directory", name_,
                                        support::printable(tensor), support::printable(file.substr(0, 255))));
    }
    auto it = opened.find(file);
    if (it == opened.end()) {
      if (opened.size() >= kMaxIndexShards)
        throw CheckpointError(fmt::format("{}: more than {} shards", name_, kMaxIndexShards));
      files_.push_back(std::make_unique<SafetensorsFile>(dir / file));
      it = opened.emplace(file, files_.back().get()).first;
    }
    const SafetensorsEntry* entry = it->second->find(tensor);
    if (entry == nullptr) {
      throw CheckpointError(fmt::format("{}: weight_map puts {} in {}, which has no such tensor", name_,
                                        support::printable(tensor), it->second->name()));
    }
    tensors_[tensor] = {it->second, entry};
  }
  // A tensor in a shard the index does not send it to: two files would claim it.
  for (const auto& shard : files_) {
    for (const auto& entry : shard->entries()) {
      const auto listed = tensors_.find(entry.name);
      if (listed == tensors_.end()) {
        throw CheckpointError(fmt::format("{}: holds tensor {}, which the index's weight_map does not list",
                                          shard->name(), support::printable(entry.name)));
      }
      if (listed->second.first != shard.get()) {
        throw CheckpointError(fmt::format("{}: tensor {} is in {} and in {}", name_, support::printable(entry.name),
                                          listed->second.first->name(), shard->name()));
      }
    }
  }
}

std::vector<std::string> HfWeights::names() const {
  std::vector<std::string> out;
  out.reserve(tensors_.size());
  for (const auto& [tensor, unused] : tensors_) out.push_back(tensor);
  return out;
}

std::pair<const SafetensorsFile*, const SafetensorsEntry*> HfWeights::find(const std::string& tensor) const {
  const auto it = tensors_.find(tensor);
  if (it == tensors_.end()) return {nullptr, nullptr};
  return it->second;
}

}  // namespace hpctrain::ckpt_file
