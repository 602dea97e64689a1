// Fuzz harness: a Hugging Face model directory's weights as model.init_from
// reads them (ckpt_file/hf_weights.h, ckpt_file/safetensors_file.h). The
// input is an index's text (model.safetensors.index.json), then after a NUL
// byte the bytes of a safetensors file; with no NUL, or an empty index, the
// whole input (or what follows the NUL) is the one model.safetensors. The
// shard is named model-1.safetensors for an index to point at. Any input
// must give tensors whose every value can be read, or end in a
// CheckpointError naming the file.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/hf_weights.h"
#include "scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = hpctrain::fuzz::scratch_dir("safetensors");
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string index = nul == std::string::npos ? std::string() : input.substr(0, nul);
  const std::string weights = nul == std::string::npos ? input : input.substr(nul + 1);
  std::filesystem::remove(dir / "model.safetensors");
  std::filesystem::remove(dir / "model.safetensors.index.json");
  if (index.empty()) {
    std::ofstream(dir / "model.safetensors", std::ios::binary | std::ios::trunc) << weights;
  } else {
    std::ofstream(dir / "model.safetensors.index.json", std::ios::binary | std::ios::trunc) << index;
    std::ofstream(dir / "model-1.safetensors", std::ios::binary | std::ios::trunc) << weights;
  }
  try {
    const hpctrain::ckpt_file::HfWeights model(dir);
    for (const auto& name : model.names()) {
      const auto [file, entry] = model.find(name);
      if (entry->end - entry->begin <= (std::uint64_t{1} << 20)) (void)file->read_float32(*entry);
    }
  } catch (const hpctrain::ckpt_file::CheckpointError&) {
    // refused, naming the file
  }
  return 0;
}
