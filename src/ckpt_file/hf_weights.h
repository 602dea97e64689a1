// A Hugging Face model directory's weights: `model.safetensors`, or the
// shards a `model.safetensors.index.json` lists (its weight_map: tensor name
// to file). The index is input from elsewhere like the files: its size and
// nesting are bounded, each shard must be a plain file name in the directory,
// every tensor it lists must be in the file it names, and no tensor may be in
// two files.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ckpt_file/safetensors_file.h"

namespace hpctrain::ckpt_file {

class HfWeights {
 public:
  explicit HfWeights(const std::filesystem::path& dir);

  // Every tensor name, sorted.
  [[nodiscard]] std::vector<std::string> names() const;
  // The file holding `tensor` and its entry; {nullptr, nullptr} when none does.
  [[nodiscard]] std::pair<const SafetensorsFile*, const SafetensorsEntry*> find(const std::string& tensor) const;
  // What errors name: the file, or the index of a sharded model.
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, std::pair<const SafetensorsFile*, const SafetensorsEntry*>> tensors_;
};

}  // namespace hpctrain::ckpt_file
