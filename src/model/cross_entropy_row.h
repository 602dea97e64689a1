// Cross-entropy of one row of logits against its target, taken while the row
// sits in cache, optionally turning the row into its gradient in place. The
// fused output layer (model/linear_cross_entropy) runs it on every row of a
// block; plain C++, so that GCC vectorizes it for each instruction set.
#pragma once

#include <cstdint>

namespace hpctrain::model {

// Returns log(sum(exp(row))) - row[target], target in [0, size). With
// `gradient`, the row becomes scale * (softmax(row) - onehot(target)).
// The exponentials are taken once and serve both. The result does not depend
// on the instruction set: sums and maxima run over 16 fixed lanes.
float cross_entropy_row(float* row, std::int64_t size, std::int64_t target, float scale, bool gradient);

}  // namespace hpctrain::model
