#include "train/evaluate.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include <cmath>

#include "train/autocast.h"
#include "train/batches.h"

namespace hpctrain::train {

EvalResult evaluate(model::LanguageModel& model, const data::TokenDataset& validation, const data::MlmMasking& masking,
                    std::int64_t batches, std::int64_t micro_batch, bool bf16, comm::Communicator& comm) {
  torch::NoGradGuard no_grad;
  model.eval();
  const auto world = static_cast<std::uint64_t>(comm.size());
  const auto total =
      std::min<std::uint64_t>(validation.size(), static_cast<std::uint64_t>(batches * micro_batch) * world);
  std::vector<std::uint64_t> mine;
  for (std::uint64_t i = static_cast<std::uint64_t>(comm.rank()); i < total; i += world) mine.push_back(i);

  // Sums over this rank: loss * tokens, tokens, correct masked predictions.
  double sums[3] = {0, 0, 0};
  for (std::size_t begin = 0; begin < mine.size(); begin += static_cast<std::size_t>(micro_batch)) {
    const std::size_t count = std::min<std::size_t>(static_cast<std::size_t>(micro_batch), mine.size() - begin);
    const Batch batch = make_batch(validation, mine, begin, count, model.objective(), masking, 0);
    const torch::Device device = model.parameters().front().device();
    const torch::Tensor targets = batch.targets.to(device);
    torch::Tensor logits;
    {
      const AutocastGuard autocast(bf16, device.is_cuda());
      logits = model.forward(batch.inputs.to(device));
    }
    const torch::Tensor predicted = targets.ne(data::kIgnoreLabel);
    const double n = static_cast<double>(predicted.sum().item<std::int64_t>());
    sums[0] += model::language_model_loss(logits, targets).item<double>() * n;
    sums[1] += n;
    sums[2] += static_cast<double>((logits.argmax(-1).eq(targets) & predicted).sum().item<std::int64_t>());
  }
  model.train();
  // Per-rank sums in double, gathered, then added in rank order: the result is
  // independent of reduction order.
  std::vector<std::int64_t> bits(3 * static_cast<std::size_t>(comm.size()));
  std::int64_t mine_bits[3];
  std::memcpy(mine_bits, sums, sizeof sums);
  comm.allgather(mine_bits, bits.data(), 3, comm::DType::kInt64);
  double total_sums[3] = {0, 0, 0};
  for (int r = 0; r < comm.size(); ++r) {
    double part[3] = {};
    std::memcpy(part, bits.data() + std::ptrdiff_t{3} * r, sizeof part);
    for (int k = 0; k < 3; ++k) total_sums[k] += part[k];
  }
  EvalResult result;
  result.tokens = static_cast<std::int64_t>(total_sums[1]);
  result.loss = total_sums[1] > 0 ? total_sums[0] / total_sums[1] : 0;
  result.perplexity = std::exp(result.loss);
  result.masked_accuracy = total_sums[1] > 0 ? total_sums[2] / total_sums[1] : 0;
  return result;
}

}  // namespace hpctrain::train
