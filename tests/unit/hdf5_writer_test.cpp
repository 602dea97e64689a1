// Hdf5Writer stages chunks itself (copy, zero padding, our Fletcher32) and
// writes them raw, in batches across datasets. Whatever the shapes, HDF5's own
// reader, which verifies every chunk's checksum, must give the tensors back.
#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ckpt/checkpoint.h"
#include "ckpt_file/hdf5_file.h"

namespace hpctrain::ckpt {
namespace {

TEST(Hdf5WriterTest, EveryShapeReadsBackThroughHdf5sChecksums) {
  torch::manual_seed(3);
  std::vector<std::pair<std::string, torch::Tensor>> named = {
      {"scalar", torch::tensor(2.5, torch::kFloat64)},
      {"empty", torch::empty({0, 4})},
      {"odd_bytes", torch::randint(256, {7}, torch::kUInt8)},
      {"group/rows", torch::randn({3, 5})},
      {"steps", torch::arange(11, torch::kInt64)},
      // 4 MiB chunks of whole rows: exactly one, one plus an edge chunk, several.
      {"one_chunk", torch::randn({1024, 1024})},
      {"edge_chunk", torch::randn({1500, 1024})},
      {"many/chunks", torch::randn({10, 1000, 300})},
      {"wide_rows", torch::randn({3, 1 << 21})},  // each row bigger than a chunk
      {"transposed", torch::randn({300, 200}).t()},
  };
  const auto path = std::filesystem::temp_directory_path() / ("hdf5-writer-" + std::to_string(getpid()) + ".h5");
  {
    std::vector<ckpt_file::ArrayView> arrays;
    std::vector<torch::Tensor> contiguous;
    for (const auto& [name, t] : named) {
      contiguous.push_back(t.contiguous());
      const auto type = t.scalar_type() == torch::kFloat32   ? ckpt_file::ElementType::kFloat32
                        : t.scalar_type() == torch::kFloat64 ? ckpt_file::ElementType::kFloat64
                        : t.scalar_type() == torch::kInt64   ? ckpt_file::ElementType::kInt64
                                                             : ckpt_file::ElementType::kUInt8;
      arrays.push_back({name, type, t.sizes().vec(), contiguous.back().data_ptr()});
    }
    ckpt_file::Hdf5Writer writer(path);
    writer.arrays(arrays);
    writer.finish();
  }
  const ckpt_file::StoredCheckpoint reader(path);
  for (const auto& [name, expected] : named) {
    const torch::Tensor read = read_tensor(reader, name);
    EXPECT_EQ(read.scalar_type(), expected.scalar_type()) << name;
    if (expected.dim() == 0) {
      EXPECT_EQ(read.numel(), 1) << name;
      EXPECT_TRUE(torch::equal(read.reshape({}), expected)) << name;
    } else {
      EXPECT_TRUE(torch::equal(read, expected)) << name;
    }
  }
  std::filesystem::remove(path);
}

// A DDAP checkpoint of the quickstart's model holds hundreds of datasets
// (replicas, moments), so its manifest passes 64 KiB, the most an attribute
// in HDF5's original file format can hold.
TEST(Hdf5WriterTest, AManifestOver64KiBIsWrittenAndReadBack) {
  const auto path = std::filesystem::temp_directory_path() / ("hdf5-manifest-" + std::to_string(getpid()) + ".h5");
  const torch::Tensor value = torch::arange(4, torch::kFloat32);
  constexpr int kDatasets = 1000;
  std::vector<std::string> names;
  names.reserve(kDatasets);
  for (int i = 0; i < kDatasets; ++i) names.push_back("replicas/rank_1/moments/transformer.layer." + std::to_string(i));
  {
    std::vector<ckpt_file::ArrayView> arrays;
    arrays.reserve(names.size());
    for (const auto& name : names) arrays.push_back({name, ckpt_file::ElementType::kFloat32, {4}, value.data_ptr()});
    ckpt_file::Hdf5Writer writer(path);
    writer.attribute("config", std::string(70000, 'x'));
    writer.arrays(arrays);
    writer.finish();
  }
  const ckpt_file::StoredCheckpoint reader(path);
  EXPECT_GT(reader.string_attribute("manifest").size(), std::size_t{64} << 10);
  EXPECT_EQ(reader.string_attribute("config"), std::string(70000, 'x'));
  EXPECT_TRUE(torch::equal(read_tensor(reader, names.back()), value));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hpctrain::ckpt
