#include "train/batches.h"

#include <torch/types.h>

namespace hpctrain::train {

Batch make_batch(const data::TokenDataset& dataset, const std::vector<std::uint64_t>& indices, std::size_t begin,
                 std::size_t count, model::Objective objective, const data::MlmMasking& masking, std::uint64_t epoch) {
  const auto t = static_cast<std::int64_t>(dataset.seq_len());
  torch::Tensor samples = torch::empty({static_cast<std::int64_t>(count), t + 1}, torch::kInt64);
  auto* data = samples.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < count; ++i)
    dataset.read(indices[begin + i], data + static_cast<std::int64_t>(i) * (t + 1));
  if (objective == model::Objective::kCausal) {
    return {samples.narrow(1, 0, t).contiguous(), samples.narrow(1, 1, t).contiguous()};
  }
  torch::Tensor inputs = samples.narrow(1, 0, t).contiguous();
  torch::Tensor labels = torch::empty_like(inputs);
  for (std::size_t i = 0; i < count; ++i) {
    const auto row = static_cast<std::int64_t>(i) * t;
    const std::uint64_t sample_id = indices[begin + i] + epoch * dataset.size();
    data::mask_tokens(masking, sample_id, inputs.data_ptr<std::int64_t>() + row, labels.data_ptr<std::int64_t>() + row,
                      static_cast<std::size_t>(t));
  }
  return {inputs, labels};
}

}  // namespace hpctrain::train
