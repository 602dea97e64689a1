// Our Fletcher32 must store exactly what HDF5's own filter stores: the filter
// writes a chunk, H5Dread_chunk returns its raw bytes, and the checksum they
// end with must equal ours, for even and odd sizes and the all-zero and
// all-ones edge cases of its end-around-carry arithmetic.
#include "ckpt_file/fletcher32.h"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <vector>

namespace hpctrain::ckpt_file {
namespace {

std::uint32_t hdf5_filter_checksum(const std::vector<unsigned char>& data) {
  const auto path = std::filesystem::temp_directory_path() / ("fletcher32-" + std::to_string(getpid()) + ".h5");
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hsize_t size = data.size();
  const hid_t space = H5Screate_simple(1, &size, nullptr);
  const hid_t create = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(create, 1, &size);
  H5Pset_fletcher32(create);
  const hid_t set = H5Dcreate2(file, "d", H5T_STD_U8LE, space, H5P_DEFAULT, create, H5P_DEFAULT);
  EXPECT_GE(H5Dwrite(set, H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
  std::vector<unsigned char> raw(data.size() + 4);
  const hsize_t offset = 0;
  std::uint32_t mask = 0;
  EXPECT_GE(H5Dread_chunk(set, H5P_DEFAULT, &offset, &mask, raw.data()), 0);
  H5Dclose(set);
  H5Pclose(create);
  H5Sclose(space);
  H5Fclose(file);
  std::filesystem::remove(path);
  std::uint32_t stored = 0;
  for (std::size_t k = 0; k < 4; ++k) stored |= static_cast<std::uint32_t>(raw[data.size() + k]) << (8 * k);
  return stored;
}

TEST(Fletcher32Test, MatchesHdf5sFilter) {
  std::mt19937 random(7);
  // Sizes around the 16-byte vectors and the 2048-byte blocks of the fast path.
  for (const std::size_t size : {1UL, 2UL, 3UL, 15UL, 16UL, 17UL, 719UL, 720UL, 721UL, 2047UL, 2048UL, 2049UL,
                                 2048UL * 3 + 17, 65535UL * 2 + 1, (1UL << 21) + 5}) {
    std::vector<unsigned char> data(size);
    for (auto& b : data) b = static_cast<unsigned char>(random());
    EXPECT_EQ(fletcher32(data.data(), size), hdf5_filter_checksum(data)) << size << " random bytes";
  }
  for (const unsigned char fill : {0x00, 0xff}) {
    for (const std::size_t size : {2UL, 7UL, 2048UL, 131070UL, 131071UL, (1UL << 22) + 3}) {
      const std::vector<unsigned char> data(size, fill);
      EXPECT_EQ(fletcher32(data.data(), size), hdf5_filter_checksum(data)) << size << " bytes of " << int{fill};
    }
  }
}

}  // namespace
}  // namespace hpctrain::ckpt_file
