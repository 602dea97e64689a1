// The denominator of MFU: fp32 matmul FLOP/s on this process's threads,
// measured rather than taken from a datasheet, as the best of a few 2048^3
// products through LibTorch (so through the BLAS training uses): at least
// two (the first warms the BLAS threads and pages), at most four, and no
// third once half a second has gone. Every training run starts with it, so
// on one core (~0.35 s a product) it costs two products, not four.
#pragma once

namespace hpctrain::runtime {

double measure_sgemm_peak();

}  // namespace hpctrain::runtime
