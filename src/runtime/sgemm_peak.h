// The denominator of MFU: fp32 matmul FLOP/s on this process's threads,
// measured rather than taken from a datasheet, as the best of a few 2048^3
// products through LibTorch (so through the BLAS training uses).
#pragma once

namespace hpctrain::runtime {

double measure_sgemm_peak();

}  // namespace hpctrain::runtime
