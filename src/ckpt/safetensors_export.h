// `hpctrain ckpt export`: a checkpoint's model weights as a safetensors file
// (https://huggingface.co/docs/safetensors): an 8-byte little-endian header
// length, a JSON header naming each tensor's dtype, shape and byte range, then
// the raw little-endian data. Hugging Face's loaders read it directly.
#pragma once

#include <filesystem>
#include <string>

namespace hpctrain::ckpt {

struct ExportResult {
  std::size_t tensors = 0;
  std::size_t bytes = 0;
};

// Writes `checkpoint`'s /model group (or another group of parameters: "ema",
// the moving average) to `out` (atomically, like checkpoints). `out` must be
// free or an earlier export: anything else there (a checkpoint, a device, a
// link, a directory) is refused before a byte is read, and the temporary is
// created exclusively, never through a link.
ExportResult export_safetensors(const std::filesystem::path& checkpoint, const std::filesystem::path& out,
                                const std::string& group = "model");

}  // namespace hpctrain::ckpt
