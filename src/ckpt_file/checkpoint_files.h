// The checkpoint directory: file names, newest-first listing, keeping the
// newest K, and clearing the temporaries a killed writer leaves behind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace hpctrain::ckpt_file {

// "step-NNNNNNNN.h5": zero-padded, so name order is step order.
std::string checkpoint_file_name(std::int64_t step);
// PATH.tmp-PID: never matched by list_checkpoints.
std::filesystem::path temporary_name(const std::filesystem::path& path);

// step-*.h5 in `dir`, newest (highest step) first; empty when `dir` is absent.
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& dir);

// A checkpoint file as given, or the newest step-*.h5 in RUN_DIR/checkpoints;
// throws CheckpointError when there is none.
std::filesystem::path find_checkpoint(const std::filesystem::path& run_dir_or_file);

// Deletes all but the newest `keep` checkpoints (keep = 0 keeps everything;
// a sharded checkpoint's shards go with its index)
// and the one named `kept` (the best, checkpoint.keep_best; empty: none);
// returns what it deleted.
std::vector<std::filesystem::path> prune_checkpoints(const std::filesystem::path& dir, std::int64_t keep,
                                                     const std::filesystem::path& kept = {});

// Deletes the shard files hpctrain writes (rank-RRRRR.h5 and their
// temporaries) in a sharded checkpoint's shard directory, and the directory
// once empty; anything else in it stays. Returns what it deleted.
std::vector<std::filesystem::path> remove_shards(const std::filesystem::path& shard_dir);

// Deletes step-*.h5.tmp-* files and the shards of step-*.shards directories
// whose index is absent: the remains of writers that died mid-write.
std::vector<std::filesystem::path> remove_temporaries(const std::filesystem::path& dir);

}  // namespace hpctrain::ckpt_file
