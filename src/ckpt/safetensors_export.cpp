#include "ckpt/safetensors_export.h"

#include <fmt/format.h>
#include <torch/types.h>

#include <map>

#include "ckpt/checkpoint.h"
#include "ckpt/safetensors_writer.h"
#include "ckpt_file/checkpoint_files.h"
#include "support/bounded_file.h"
#include "support/input_file.h"
#include "support/no_follow.h"

namespace hpctrain::ckpt {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{100} << 20;

// An earlier export, which a new one may replace: a regular file that starts
// as a safetensors file does (a header length that fits the file, then '{').
bool is_safetensors_file(const std::filesystem::path& path) {
  try {
    const support::InputFile file(path, "safetensors file");
    const std::string head = file.read_at(0, 9);
    if (head.size() < 9) return false;
    std::uint64_t length = 0;
    for (int i = 7; i >= 0; --i)
      length = (length << 8U) | static_cast<unsigned char>(head[static_cast<std::size_t>(i)]);
    return length <= kMaxHeaderBytes && 8 + length <= file.size() && head[8] == '{';
  } catch (const support::InputError&) {
    return false;
  }
}

// Where the export goes must be free, or an earlier export: `--out` naming a
// checkpoint, a shard, a device or a link would otherwise replace it with a
// regular file. Returns whether something (an earlier export) is there.
bool check_destination(const std::filesystem::path& out) {
  if (out.empty()) throw CheckpointError("ckpt export --out: an empty path; name the .safetensors file to write");
  const support::FileKind there = support::file_kind_at(out);
  if (there == support::FileKind::kNothing) {
    const std::filesystem::path parent = out.parent_path().empty() ? "." : out.parent_path();
    std::error_code ec;
    if (!std::filesystem::is_directory(parent, ec)) {
      throw CheckpointError(
          fmt::format("{}: cannot export there: {} is not a directory", out.string(), parent.string()));
    }
    return false;
  }
  if (there == support::FileKind::kDirectory) {
    throw CheckpointError(fmt::format("{}: is a directory; name the .safetensors file to write", out.string()));
  }
  if (there != support::FileKind::kRegular || !is_safetensors_file(out)) {
    throw CheckpointError(
        fmt::format("{}: {} stands there, not an earlier safetensors export: ckpt export replaces "
                    "nothing else (name a new file)",
                    out.string(), there == support::FileKind::kRegular ? "a file" : support::describe(there)));
  }
  return true;
}

}  // namespace

ExportResult export_safetensors(const std::filesystem::path& checkpoint, const std::filesystem::path& out,
                                const std::string& group) {
  const bool replaces = check_destination(out);
  const StoredCheckpoint file(checkpoint);
  const ckpt_file::CheckpointInfo info = ckpt_file::read_checkpoint_info(file.index());
  const auto names = file.members(group);
  if (names.empty()) throw CheckpointError(fmt::format("{}: no /{} parameters to export", file.name(), group));

  // In name order; the data follows in the same order.
  std::vector<std::pair<std::string, at::Tensor>> tensors;
  tensors.reserve(names.size());
  for (const auto& name : names) tensors.emplace_back(name, read_tensor(file, fmt::format("{}/{}", group, name)));
  const std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                       {"hpctrain_step", std::to_string(info.step)},
                                                       {"hpctrain_weights", group == "model" ? "trained" : group},
                                                       {"hpctrain_git_commit", info.git_commit},
                                                       {"hpctrain_config", info.config_toml}};
  const std::size_t bytes = write_safetensors(out, tensors, metadata, [&](const std::filesystem::path& tmp) {
    // What stands at `out` now must still be what was checked at the start.
    if (check_destination(out) != replaces) {
      throw CheckpointError(fmt::format("{}: changed while the export was written; nothing replaced", out.string()));
    }
    if (replaces) {
      std::filesystem::rename(tmp, out);  // replaces the entry itself: a link swapped in is not followed
    } else if (!support::rename_unless_taken(tmp, out)) {
      throw CheckpointError(fmt::format("{}: appeared while the export was written; nothing replaced", out.string()));
    }
  });
  return {tensors.size(), bytes};
}

}  // namespace hpctrain::ckpt
