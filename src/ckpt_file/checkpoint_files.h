// The checkpoint directory: file names, newest-first listing, keeping the
// newest K, clearing the temporaries a killed writer leaves behind, and
// setting aside what lies beyond the step a run starts from. Others may write
// to this directory too (a group-shared project): nothing here deletes a file
// it cannot tell hpctrain wrote, and nothing follows a link to delete.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace hpctrain::ckpt_file {

// "step-NNNNNNNN.h5": zero-padded to 8 digits, so name order is step order.
std::string checkpoint_file_name(std::int64_t step);
// The step a name stands for when it is exactly what checkpoint_file_name
// gives (no other padding, no sign, at most 18 digits); nothing otherwise.
std::optional<std::int64_t> checkpoint_step(const std::string& file_name);
// PATH.tmp-PID: never matched by list_checkpoints.
std::filesystem::path temporary_name(const std::filesystem::path& path);

// The regular files in `dir` named as checkpoint_file_name names them,
// highest step first; empty when `dir` is absent.
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& dir);

// A checkpoint file as given, or the newest step-*.h5 in RUN_DIR/checkpoints;
// throws CheckpointError when there is none.
std::filesystem::path find_checkpoint(const std::filesystem::path& run_dir_or_file);

// Whether `path` is a checkpoint hpctrain wrote for `step`: a regular file,
// not a link, whose root attribute step is `step`. Read in a child process,
// as verification is (a crafted file can crash libhdf5).
bool written_by_hpctrain(const std::filesystem::path& path, std::int64_t step);

struct Pruning {
  std::vector<std::filesystem::path> removed;
  std::vector<std::string> left_alone;  // "PATH: why", for the log
};
// After `written` was written: keeps it and the newest `keep` - 1 checkpoints
// of lower steps, and `kept` (the best, checkpoint.keep_best; empty: none),
// and deletes the older ones (a sharded checkpoint's shards go with its
// index); keep = 0 keeps everything. Only files written_by_hpctrain count or
// go; anything else is left alone and named. Checkpoints of higher steps than
// `written` belong to another history and are not touched (see
// set_aside_after).
Pruning prune_checkpoints(const std::filesystem::path& dir, std::int64_t keep, const std::filesystem::path& written,
                          const std::filesystem::path& kept = {});

// Deletes the shard files hpctrain writes (rank-RRRRR.h5 and their
// temporaries, regular files only) in a sharded checkpoint's shard directory,
// and the directory once empty; anything else in it stays, and a directory
// that is a link is left whole. Returns what it deleted.
std::vector<std::filesystem::path> remove_shards(const std::filesystem::path& shard_dir);

// Deletes the remains of writers that died mid-write: step-N.h5.tmp-PID files
// whose process PID no longer runs on this host (or is this one: a run calls
// this before it writes anything), and the shards of step-N.shards
// directories whose index is absent. Returns what it deleted; what it cannot
// read or delete (permissions) it leaves.
std::vector<std::filesystem::path> remove_temporaries(const std::filesystem::path& dir);

struct SetAside {
  std::filesystem::path into;  // empty when nothing was moved
  std::vector<std::filesystem::path> moved;
  std::vector<std::string> left;  // "PATH: why" for what could not be moved (another user's directory)
};
// A run that starts from step `from` (-1: from scratch) continues a history
// in which nothing beyond `from` happened yet. Whatever `dir` holds under a
// checkpoint's name of a higher step (an abandoned branch after a rollback,
// the checkpoints of an earlier run before a fresh start, files that did not
// verify, or a file someone left there) is moved, index and shards alike,
// into a new directory DIR/superseded-from-step-S-TIME-PID: nothing is
// deleted, and neither this run's writes nor its pruning, nor eval, export or
// the next auto-resume, will take it for this run's. What cannot be moved is
// named in `left` and stays.
SetAside set_aside_after(const std::filesystem::path& dir, std::int64_t from);

// A run's checkpoints/ may be a link its owner made (to scratch space), but
// not one someone else made: through that, pruning and setting aside would
// act on files of theirs choosing. Throws CheckpointError for such a link.
void check_checkpoint_directory(const std::filesystem::path& dir);

}  // namespace hpctrain::ckpt_file
