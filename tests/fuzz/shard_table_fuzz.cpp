// Fuzz harness: the names a checkpoint directory and an index hold
// (ckpt_file/shard_table, ckpt_file/checkpoint_files). The input's first byte
// sets how many shards the index claims; the rest up to a NUL byte is its
// shard_files table, and what follows the NUL a file name found in a
// checkpoint directory. A table either parses to exactly that many entries,
// each naming the shard file hpctrain writes for its rank (nothing else can
// be opened through it) and writing back to the same table, or is refused
// with a CheckpointError; a file name is a checkpoint's only when hpctrain
// gives exactly that name to its step.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ckpt_file/checkpoint_error.h"
#include "ckpt_file/checkpoint_files.h"
#include "ckpt_file/shard_table.h"
#include "split_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::int64_t count = data[0];
  const auto parts = hpctrain::fuzz::split_at_nul(data + 1, size - 1);
  try {
    const auto table = hpctrain::ckpt_file::parse_shard_table(parts[0], count, "fuzz");
    if (static_cast<std::int64_t>(table.size()) != count) std::abort();
    for (std::size_t i = 0; i < table.size(); ++i) {
      if (table[i].file != hpctrain::ckpt_file::shard_file_name(static_cast<std::int64_t>(i))) std::abort();
    }
    const auto again = hpctrain::ckpt_file::parse_shard_table(hpctrain::ckpt_file::format_shard_table(table), count,
                                                              "fuzz (written back)");
    for (std::size_t i = 0; i < table.size(); ++i) {
      if (again[i].bytes != table[i].bytes || again[i].sha256 != table[i].sha256) std::abort();
    }
  } catch (const hpctrain::ckpt_file::CheckpointError&) {
    // refused, naming the file and line
  }
  if (parts.size() > 1) {
    const auto step = hpctrain::ckpt_file::checkpoint_step(parts[1]);
    if (step && (*step < 0 || hpctrain::ckpt_file::checkpoint_file_name(*step) != parts[1])) std::abort();
  }
  return 0;
}
