// The denominator of MFU: the matmul FLOP/s this rank can reach, measured
// rather than taken from a datasheet, as the best of a few square products
// through LibTorch (so through the BLAS or cuBLAS training uses).
//  - CPU, fp32: 2048^3 products on this process's threads. At least two (the
//    first warms the BLAS threads and pages), at most four, and no third once
//    half a second has gone: every training run starts with it, so on one core
//    (~0.35 s a product) it costs two products, not four.
//  - GPU: 8192^3 products in the precision the model computes in (bf16 under
//    training.precision = "bf16", else fp32, which cuBLAS may run on TF32
//    tensor cores where LibTorch allows it), each timed to its end
//    (synchronised); a warm-up, then the best of four.
#pragma once

#include <torch/types.h>

namespace hpctrain::runtime {

double measure_matmul_peak(const torch::Device& device, torch::ScalarType dtype);

}  // namespace hpctrain::runtime
