#include "ckpt/checkpoint_writer.h"

#include <chrono>
#include <utility>

#include "ckpt_file/checkpoint_files.h"

namespace hpctrain::ckpt {
namespace {

Written write_and_prune(const std::filesystem::path& path, Snapshot snapshot, std::int64_t keep,
                        const std::filesystem::path& kept) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t bytes = snapshot.bytes();
  write_checkpoint(path, std::move(snapshot));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto pruning = ckpt_file::prune_checkpoints(path.parent_path(), keep, path, kept);
  return {path, bytes, seconds, std::move(pruning.removed), std::move(pruning.left_alone)};
}

}  // namespace

CheckpointWriter::~CheckpointWriter() {
  // A half-written temporary is harmless, but finishing costs little and keeps the checkpoint.
  if (pending_.valid()) pending_.wait();
}

void CheckpointWriter::write(const std::filesystem::path& path, Snapshot snapshot, const std::filesystem::path& kept) {
  if (pending_.valid()) (void)pending_.get();
  if (background_) {
    pending_ = std::async(std::launch::async, write_and_prune, path, std::move(snapshot), keep_, kept);
  } else {
    std::promise<Written> done;
    done.set_value(write_and_prune(path, std::move(snapshot), keep_, kept));
    pending_ = done.get_future();
  }
}

std::optional<Written> CheckpointWriter::finished() {
  if (!pending_.valid() || pending_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return std::nullopt;
  return pending_.get();
}

std::optional<Written> CheckpointWriter::wait() {
  if (!pending_.valid()) return std::nullopt;
  return pending_.get();
}

}  // namespace hpctrain::ckpt
