#include "ckpt/safetensors_writer.h"

#include <fmt/format.h>
#include <torch/types.h>

#include <unistd.h>

#include <array>
#include <nlohmann/json.hpp>

#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/checkpoint_files.h"
#include "support/no_follow.h"

namespace hpctrain::ckpt {
namespace {

// Writes through `body` into a new temporary beside `out`, fsyncs it and
// hands it to `install`; the temporary goes if anything fails.
void write_through_temporary(const std::filesystem::path& out,
                             const std::function<void(int fd, const std::string&)>& body,
                             const std::function<void(const std::filesystem::path&)>& install) {
  const std::filesystem::path tmp = ckpt_file::temporary_name(out);
  support::OwnedFd fd = support::create_new_file(tmp, "temporary export");
  struct RemoveOnFailure {
    const std::filesystem::path& path;
    bool done = false;
    ~RemoveOnFailure() {
      std::error_code ec;
      if (!done) std::filesystem::remove(path, ec);
    }
  } cleanup{tmp};
  body(fd.get(), tmp.string());
  if (::fsync(fd.get()) != 0) throw ckpt_file::CheckpointError(fmt::format("{}: fsync failed", tmp.string()));
  fd.close(tmp.string());
  install(tmp);
  cleanup.done = true;
}

}  // namespace

std::size_t write_safetensors(const std::filesystem::path& out,
                              const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                              const std::map<std::string, std::string>& metadata,
                              const std::function<void(const std::filesystem::path& tmp)>& install) {
  nlohmann::json header = nlohmann::json::object();
  std::vector<at::Tensor> data;
  data.reserve(tensors.size());
  std::size_t offset = 0;  // relative to the end of the header
  for (const auto& [name, tensor] : tensors) {
    at::Tensor t = tensor.to(torch::kCPU, torch::kFloat32).contiguous();
    const std::size_t bytes = static_cast<std::size_t>(t.numel()) * sizeof(float);
    header[name] = {{"dtype", "F32"}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    data.push_back(std::move(t));
  }
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned

  write_through_temporary(
      out,
      [&](int fd, const std::string& name) {
        std::array<char, 8> length{};
        for (std::size_t i = 0; i < 8; ++i) length[i] = static_cast<char>((text.size() >> (8 * i)) & 0xFFU);
        support::write_all(fd, length.data(), length.size(), name);
        support::write_all(fd, text.data(), text.size(), name);
        static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian");
        for (const auto& t : data) {
          support::write_all(fd, t.data_ptr(), static_cast<std::size_t>(t.numel()) * sizeof(float), name);
        }
      },
      install);
  return offset;
}

void write_file_atomically(const std::filesystem::path& out, const std::string& bytes,
                           const std::function<void(const std::filesystem::path& tmp)>& install) {
  write_through_temporary(
      out, [&](int fd, const std::string& name) { support::write_all(fd, bytes.data(), bytes.size(), name); }, install);
}

}  // namespace hpctrain::ckpt
