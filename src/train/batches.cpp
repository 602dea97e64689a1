#include "train/batches.h"

#include <torch/types.h>

namespace hpctrain::train {

at::Tensor read_samples(const data::TokenDataset& dataset, const std::vector<std::uint64_t>& indices, std::size_t begin,
                        std::size_t count) {
  const auto t = static_cast<std::int64_t>(dataset.seq_len());
  torch::Tensor samples = torch::empty({static_cast<std::int64_t>(count), t + 1}, torch::kInt64);
  auto* data = samples.data_ptr<std::int64_t>();
  for (std::size_t i = 0; i < count; ++i)
    dataset.read(indices[begin + i], data + static_cast<std::int64_t>(i) * (t + 1));
  return samples;
}

Batch make_batch(const at::Tensor& samples, const std::vector<std::uint64_t>& indices, std::size_t begin,
                 std::size_t count, model::Objective objective, const data::MlmMasking& masking, std::uint64_t epoch,
                 std::uint64_t dataset_size) {
  const std::int64_t t = samples.size(1) - 1;
  const torch::Tensor rows = samples.narrow(0, static_cast<std::int64_t>(begin), static_cast<std::int64_t>(count));
  if (objective == model::Objective::kCausal) {
    return {rows.narrow(1, 0, t).contiguous(), rows.narrow(1, 1, t).contiguous()};
  }
  torch::Tensor inputs = rows.narrow(1, 0, t).contiguous();
  torch::Tensor labels = torch::empty_like(inputs);
  for (std::size_t i = 0; i < count; ++i) {
    const auto row = static_cast<std::int64_t>(i) * t;
    const std::uint64_t sample_id = indices[begin + i] + epoch * dataset_size;
    data::mask_tokens(masking, sample_id, inputs.data_ptr<std::int64_t>() + row, labels.data_ptr<std::int64_t>() + row,
                      static_cast<std::size_t>(t));
  }
  return {inputs, labels};
}

Batch make_batch(const data::TokenDataset& dataset, const std::vector<std::uint64_t>& indices, std::size_t begin,
                 std::size_t count, model::Objective objective, const data::MlmMasking& masking, std::uint64_t epoch) {
  std::vector<std::uint64_t> chosen(indices.begin() + static_cast<std::ptrdiff_t>(begin),
                                    indices.begin() + static_cast<std::ptrdiff_t>(begin + count));
  return make_batch(read_samples(dataset, indices, begin, count), chosen, 0, count, objective, masking, epoch,
                    dataset.size());
}

}  // namespace hpctrain::train
