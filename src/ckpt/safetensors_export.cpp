#include "ckpt/safetensors_export.h"

#include <fmt/format.h>
#include <torch/types.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ckpt/checkpoint.h"
#include "ckpt_file/checkpoint_files.h"

namespace hpctrain::ckpt {

ExportResult export_safetensors(const std::filesystem::path& checkpoint, const std::filesystem::path& out,
                                const std::string& group) {
  const StoredCheckpoint file(checkpoint);
  const ckpt_file::CheckpointInfo info = ckpt_file::read_checkpoint_info(file.index());
  const auto names = file.members(group);
  if (names.empty()) throw CheckpointError(fmt::format("{}: no /{} parameters to export", file.name(), group));

  nlohmann::json header = nlohmann::json::object();
  // Tensor data follows in name order; offsets are relative to the end of the header.
  std::vector<torch::Tensor> tensors;
  std::size_t offset = 0;
  for (const auto& name : names) {
    torch::Tensor t = read_tensor(file, fmt::format("{}/{}", group, name)).to(torch::kFloat32).contiguous();
    const std::size_t bytes = static_cast<std::size_t>(t.numel()) * sizeof(float);
    header[name] = {{"dtype", "F32"}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    tensors.push_back(std::move(t));
  }
  // Metadata values must be strings.
  header["__metadata__"] = {{"format", "pt"},
                            {"hpctrain_step", std::to_string(info.step)},
                            {"hpctrain_weights", group == "model" ? "trained" : group},
                            {"hpctrain_git_commit", info.git_commit},
                            {"hpctrain_config", info.config_toml}};
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned

  if (std::filesystem::is_directory(out)) {
    throw CheckpointError(fmt::format("{}: is a directory; name the .safetensors file to write", out.string()));
  }
  const std::filesystem::path tmp = ckpt_file::temporary_name(out);
  // The temporary is ours: it goes if anything below fails.
  struct RemoveOnFailure {
    const std::filesystem::path& path;
    bool done = false;
    ~RemoveOnFailure() {
      std::error_code ec;
      if (!done) std::filesystem::remove(path, ec);
    }
  } cleanup{tmp};
  {
    std::ofstream stream(tmp, std::ios::binary | std::ios::trunc);
    if (!stream) throw CheckpointError(fmt::format("{}: cannot create", tmp.string()));
    const auto length = static_cast<std::uint64_t>(text.size());
    for (int i = 0; i < 8; ++i) stream.put(static_cast<char>((length >> (8 * i)) & 0xFFU));
    stream.write(text.data(), static_cast<std::streamsize>(text.size()));
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");
    for (const auto& t : tensors) {
      stream.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * sizeof(float)));
    }
    if (!stream.flush()) throw CheckpointError(fmt::format("{}: write failed", tmp.string()));
  }
  std::filesystem::rename(tmp, out);
  cleanup.done = true;
  return {tensors.size(), offset};
}

}  // namespace hpctrain::ckpt
