// Fuzz harness: a prepared data set as the trainer opens it
// (data/token_dataset): meta.json and a token shard. The input is meta.json's
// text, then after a NUL byte the bytes of train-000.bin; seq_len comes from
// the input's length. Any input must open and give samples that lie inside the
// shard, or end in a DataError naming the file. Its sizes and counts are
// what an attacker sets, so the harness adds boundary integers and cut shards
// to libFuzzer's mutations (number_mutator.h).
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/data_error.h"
#include "data/token_dataset.h"
#include "number_mutator.h"
#include "scratch_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path dir = hpctrain::fuzz::scratch_dir("data");
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  std::ofstream(dir / "meta.json", std::ios::trunc) << input.substr(0, nul);
  {
    std::ofstream shard(dir / "train-000.bin", std::ios::binary | std::ios::trunc);
    if (nul != std::string::npos) shard << input.substr(nul + 1);
  }
  const std::size_t seq_len = 1 + size % 16;
  try {
    const hpctrain::data::TokenDataset set(dir, "train", seq_len);
    std::vector<std::int64_t> sample(seq_len + 1);
    for (std::size_t i = 0; i < set.size() && i < 64; ++i) set.read(i, sample.data());
    if (set.size() > 64) set.read(set.size() - 1, sample.data());
  } catch (const hpctrain::data::DataError&) {
    // refused, naming the file
  }
  return 0;
}
