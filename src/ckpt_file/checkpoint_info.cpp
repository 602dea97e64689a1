#include "ckpt_file/checkpoint_info.h"

#include <fmt/format.h>

namespace hpctrain::ckpt_file {
namespace {

constexpr std::int64_t kMaxWorldSize = std::int64_t{1} << 20;

}  // namespace

CheckpointInfo read_checkpoint_info(const Hdf5Reader& file) {
  CheckpointInfo info;
  if (file.has_attribute("format_version")) {
    info.format = file.int_attribute("format_version");
  } else {
    // Format 1 had no format_version, and none of the attributes later
    // formats added. A file that has them lost its format_version (one
    // damaged byte of its name is enough), and reading it as format 1 would
    // skip its manifest with no more than a warning.
    for (const char* later : {"manifest", "reducer", "tokenizer_sha256"}) {
      if (file.has_attribute(later)) {
        throw CheckpointError(
            fmt::format("{}: attribute format_version is missing, yet the file has '{}', which format 1 never had",
                        file.name(), later));
      }
    }
    info.format = 1;
  }
  if (info.format > kFormatVersion) {
    throw CheckpointError(fmt::format("{}: checkpoint format {} is newer than this hpctrain reads ({})", file.name(),
                                      info.format, kFormatVersion));
  }
  if (info.format < 1)
    throw CheckpointError(fmt::format("{}: format_version {} is not a format", file.name(), info.format));
  info.step = file.int_attribute("step");
  info.world_size = file.int_attribute("world_size");
  if (info.step < 0) throw CheckpointError(fmt::format("{}: attribute step is {}", file.name(), info.step));
  if (info.world_size < 1 || info.world_size > kMaxWorldSize) {
    throw CheckpointError(fmt::format("{}: attribute world_size is {}", file.name(), info.world_size));
  }
  info.config_toml = file.string_attribute("config");
  info.git_commit = file.string_attribute("git_commit");
  info.versions = file.string_attribute("versions");
  if (info.format >= 2) {
    info.reducer = file.string_attribute("reducer");
    info.tokenizer_sha256 = file.string_attribute("tokenizer_sha256");
    if (info.reducer != "ddp" && info.reducer != "ddap") {
      throw CheckpointError(fmt::format("{}: attribute reducer is '{}', not ddp or ddap", file.name(), info.reducer));
    }
  }
  return info;
}

CheckpointInfo read_checkpoint_info(const std::filesystem::path& path) {
  return read_checkpoint_info(Hdf5Reader(path));
}

}  // namespace hpctrain::ckpt_file
