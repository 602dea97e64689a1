// HDF5's Fletcher32 checksum, computed here so that checkpoints can write
// their chunks directly (H5Dwrite_chunk) instead of through HDF5's own filter,
// whose byte-at-a-time loop limits writes to about 600 MB/s. The stored value
// is bit-identical to the filter's, so HDF5, h5dump and our reader verify
// these chunks exactly as if the filter had written them.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hpctrain::ckpt_file {

// The checksum HDF5's Fletcher32 filter appends to a chunk of `bytes` bytes
// (stored little-endian after the data).
std::uint32_t fletcher32(const void* data, std::size_t bytes);

}  // namespace hpctrain::ckpt_file
