// checkpoint_bench: a checkpoint's write bandwidth against what the disk gives
// a plain sequential write, measured in turn, round after round, in the same
// directory, and compared by their medians (so drift hits both alike).
//
//   build/bench/checkpoint_bench [--dir DIR] [--rounds N]
//
// The checkpoint is the quickstart's (GPT L4 d256 V8192): its weights and
// AdamW's two moments, about 64 MB in 3 x 69 datasets, written the way the
// trainer writes it (write_checkpoint: temporary name, Fletcher32 chunks,
// flush, fsync, rename, directory fsync). The baseline does what
// `dd if=/dev/zero of=FILE bs=1M count=MB conv=fsync` does: 1 MiB writes into
// a truncated file, then fsync. Target: checkpoint / baseline >= 0.50.
#include <fcntl.h>
#include <torch/utils.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "ckpt/checkpoint.h"
#include "model/language_model.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

hpctrain::ckpt::Snapshot quickstart_snapshot() {
  hpctrain::config::ModelConfig config;
  config.kind = hpctrain::config::ModelKind::kGpt;
  config.n_layer = 4;
  config.n_head = 4;
  config.d_model = 256;
  config.max_seq_len = 256;
  torch::manual_seed(1);
  const auto model = hpctrain::model::make_model(config, 8192);
  hpctrain::ckpt::Snapshot snapshot;
  for (const char* group : {"model", "optimizer/exp_avg", "optimizer/exp_avg_sq"}) {
    hpctrain::ckpt::add_parameters(snapshot, group, *model);
  }
  return snapshot;
}

// dd bs=1M conv=fsync: the time from the first write to the end of fsync.
double plain_write(const std::filesystem::path& path, std::size_t bytes) {
  const std::vector<char> block(std::size_t{1} << 20, 0);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(path.string() + ": cannot create");
  const auto start = Clock::now();
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t n = write(fd, block.data(), std::min(block.size(), bytes - done));
    if (n <= 0) throw std::runtime_error(path.string() + ": write failed");
    done += static_cast<std::size_t>(n);
  }
  if (fsync(fd) != 0) throw std::runtime_error(path.string() + ": fsync failed");
  const double s = seconds_since(start);
  close(fd);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Checkpoint write bandwidth against a plain sequential write (dd bs=1M conv=fsync)"};
  std::filesystem::path dir = ".";
  int rounds = 15;
  app.add_option("--dir", dir, "where to write (the disk under test)");
  app.add_option("--rounds", rounds, "rounds of each, alternated")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    const hpctrain::ckpt::Snapshot snapshot = quickstart_snapshot();
    const std::size_t bytes = snapshot.bytes();
    const std::filesystem::path checkpoint = dir / "checkpoint_bench.h5";
    const std::filesystem::path plain = dir / "checkpoint_bench.dd";
    std::vector<double> checkpoint_s;
    std::vector<double> plain_s;
    for (int round = 0; round < rounds; ++round) {
      plain_s.push_back(plain_write(plain, bytes));
      // As dd's O_TRUNC, freeing the last round's blocks is not timed.
      std::filesystem::remove(checkpoint);
      const auto start = Clock::now();
      hpctrain::ckpt::write_checkpoint(checkpoint, snapshot);
      checkpoint_s.push_back(seconds_since(start));
    }
    std::filesystem::remove(checkpoint);
    std::filesystem::remove(plain);
    const double mb = static_cast<double>(bytes) / 1e6;
    const double ratio = median(plain_s) / median(checkpoint_s);
    std::printf("%.1f MB, %zu datasets, %d rounds, medians:\n", mb, snapshot.tensors.size(), rounds);
    std::printf("  plain write + fsync (dd bs=1M conv=fsync): %7.1f ms %7.0f MB/s\n", 1e3 * median(plain_s),
                mb / median(plain_s));
    std::printf("  checkpoint (Fletcher32, fsync, rename):    %7.1f ms %7.0f MB/s\n", 1e3 * median(checkpoint_s),
                mb / median(checkpoint_s));
    std::printf("checkpoint / plain = %.2f (target >= 0.50) %s\n", ratio, ratio >= 0.5 ? "PASS" : "FAIL");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "checkpoint_bench: %s\n", e.what());
    return 1;
  }
}
