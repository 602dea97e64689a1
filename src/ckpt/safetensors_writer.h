// Writing an export: a safetensors file (https://huggingface.co/docs/safetensors): an
// 8-byte little-endian header length, a JSON header naming each tensor's
// dtype, shape and byte range, then the raw little-endian data, float32.
// Written to a temporary created exclusively (never through a link), fsynced,
// then renamed into place, so a reader sees the whole file or none.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace hpctrain::ckpt {

// `tensors` in the order their data is written (each made float32 and
// contiguous); `metadata` values are strings, as the format requires.
// Returns the data's bytes. `install` moves the finished temporary to its
// place (a rename, or a rename that refuses to replace); the temporary is
// removed if anything fails.
std::size_t write_safetensors(const std::filesystem::path& out,
                              const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                              const std::map<std::string, std::string>& metadata,
                              const std::function<void(const std::filesystem::path& tmp)>& install);

// `bytes` as the file `out`, by the same temporary, fsync and `install`.
void write_file_atomically(const std::filesystem::path& out, const std::string& bytes,
                           const std::function<void(const std::filesystem::path& tmp)>& install);

}  // namespace hpctrain::ckpt
