#include "tensor_dir.h"

#include <torch/types.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace hpctrain::testing {

void write_tensor_dir(const std::filesystem::path& dir, const TensorDir& contents) {
  std::filesystem::create_directories(dir);
  nlohmann::json manifest;
  manifest["meta"] = nlohmann::json::parse(contents.meta_json);
  manifest["tensors"] = nlohmann::json::object();
  int index = 0;
  for (const auto& [name, tensor] : contents.tensors) {
    const at::Tensor t = tensor.detach().to(torch::kCPU).contiguous();
    const std::string file = "t" + std::to_string(index++) + ".bin";
    std::ofstream(dir / file, std::ios::binary)
        .write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
    manifest["tensors"][name] = {
        {"dtype", t.scalar_type() == torch::kInt64 ? "int64" : "float32"}, {"shape", t.sizes().vec()}, {"file", file}};
  }
  std::ofstream(dir / "manifest.json") << manifest.dump(1);
}

TensorDir read_tensor_dir(const std::filesystem::path& dir) {
  std::ifstream in(dir / "manifest.json");
  if (!in) throw std::runtime_error((dir / "manifest.json").string() + ": missing");
  const auto manifest = nlohmann::json::parse(in);
  TensorDir out;
  out.meta_json = manifest.value("meta", nlohmann::json::object()).dump();
  for (const auto& [name, entry] : manifest.at("tensors").items()) {
    const auto dtype = entry.at("dtype").get<std::string>() == "int64" ? torch::kInt64 : torch::kFloat32;
    const auto shape = entry.at("shape").get<std::vector<std::int64_t>>();
    at::Tensor t = torch::empty(shape, dtype);
    std::ifstream file(dir / entry.at("file").get<std::string>(), std::ios::binary);
    file.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
    if (!file) throw std::runtime_error((dir / entry.at("file").get<std::string>()).string() + ": short read");
    out.tensors.emplace(name, t);
  }
  return out;
}

}  // namespace hpctrain::testing
