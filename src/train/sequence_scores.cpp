#include "train/sequence_scores.h"

#include <ATen/autocast_mode.h>
#include <fmt/format.h>
#include <torch/nn/functional/loss.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "train/autocast.h"
#include "train/batches.h"

namespace hpctrain::train {
namespace {

constexpr std::size_t kScores = 3;  // loss sum, tokens, correct

EvalResult result_of(double loss_sum, double tokens, double correct, std::size_t sequences,
                     const SequenceScores& scores) {
  EvalResult r;
  r.tokens = static_cast<std::int64_t>(tokens);
  r.sequences = static_cast<std::int64_t>(sequences);
  r.population = scores.population;
  r.split = scores.split;
  r.loss = tokens > 0 ? loss_sum / tokens : 0;
  r.perplexity = std::exp(r.loss);
  r.masked_accuracy = tokens > 0 ? correct / tokens : 0;
  return r;
}

}  // namespace

std::string EvalResult::coverage() const {
  const std::string of = fmt::format("sequences of the {} split", split == "val" ? "validation" : split);
  return full() ? fmt::format("{} tokens, all {} {}", tokens, population, of)
                : fmt::format("{} tokens, a sample of {} of the {} {}", tokens, sequences, population, of);
}

SequenceScores score_sequences(model::LanguageModel& model, const data::TokenDataset& dataset,
                               const std::vector<std::uint64_t>& indices, const data::MlmMasking& masking,
                               std::int64_t micro_batch, bool bf16, comm::Communicator& comm) {
  torch::NoGradGuard no_grad;
  model.eval();
  const auto world = static_cast<std::size_t>(comm.size());
  const auto rank = static_cast<std::size_t>(comm.rank());
  std::vector<std::uint64_t> mine;
  for (std::size_t i = rank; i < indices.size(); i += world) mine.push_back(indices[i]);
  const std::size_t per_rank = (indices.size() + world - 1) / world;  // the most any rank scores

  // This rank's scores, kScores doubles per sequence, padded to per_rank.
  std::vector<double> own(per_rank * kScores, 0.0);
  const torch::Device device = model.parameters().front().device();
  for (std::size_t begin = 0; begin < mine.size(); begin += static_cast<std::size_t>(micro_batch)) {
    const std::size_t count = std::min<std::size_t>(static_cast<std::size_t>(micro_batch), mine.size() - begin);
    const Batch batch = make_batch(dataset, mine, begin, count, model.objective(), masking, 0);
    const torch::Tensor targets = batch.targets.to(device);
    torch::Tensor logits;
    {
      const AutocastGuard autocast(bf16, device.is_cuda());
      logits = model.forward(batch.inputs.to(device));
    }
    const auto vocab = logits.size(-1);
    // Per-token losses in fp32, 0 where nothing is predicted; summed per
    // sequence in double on the host.
    const torch::Tensor token_loss =
        torch::nn::functional::cross_entropy(
            logits.reshape({-1, vocab}).to(torch::kFloat32), targets.reshape({-1}),
            torch::nn::functional::CrossEntropyFuncOptions().ignore_index(data::kIgnoreLabel).reduction(torch::kNone))
            .reshape(targets.sizes())
            .to(torch::kCPU, torch::kFloat64);
    const torch::Tensor predicted = targets.ne(data::kIgnoreLabel);
    const torch::Tensor tokens = predicted.sum(1).to(torch::kCPU, torch::kFloat64).contiguous();
    const torch::Tensor correct =
        (logits.argmax(-1).eq(targets) & predicted).sum(1).to(torch::kCPU, torch::kFloat64).contiguous();
    const torch::Tensor loss_sum = token_loss.sum(1).contiguous();
    const double* per_sequence[kScores] = {loss_sum.data_ptr<double>(), tokens.data_ptr<double>(),
                                           correct.data_ptr<double>()};
    for (std::size_t i = 0; i < count; ++i) {
      for (std::size_t k = 0; k < kScores; ++k) own[(begin + i) * kScores + k] = per_sequence[k][i];
    }
  }
  model.train();

  // Gathered as raw bits (the communicator moves int64), then put back in the
  // order of `indices`: position p was scored by rank p % world, as its p / world-th.
  std::vector<std::int64_t> own_bits(own.size());
  std::memcpy(own_bits.data(), own.data(), own.size() * sizeof(double));
  std::vector<std::int64_t> all_bits(own.size() * world);
  comm.allgather(own_bits.data(), all_bits.data(), own_bits.size(), comm::DType::kInt64);
  SequenceScores s;
  s.indices = indices;
  s.population = static_cast<std::int64_t>(dataset.size());
  s.split = dataset.split();
  s.loss_sum.resize(indices.size());
  s.tokens.resize(indices.size());
  s.correct.resize(indices.size());
  for (std::size_t p = 0; p < indices.size(); ++p) {
    double values[kScores];
    std::memcpy(values, all_bits.data() + ((p % world) * per_rank + p / world) * kScores, sizeof values);
    s.loss_sum[p] = values[0];
    s.tokens[p] = values[1];
    s.correct[p] = values[2];
  }
  return s;
}

EvalResult summarize(const SequenceScores& s) {
  double sums[kScores] = {0, 0, 0};
  for (std::size_t p = 0; p < s.indices.size(); ++p) {
    sums[0] += s.loss_sum[p];
    sums[1] += s.tokens[p];
    sums[2] += s.correct[p];
  }
  return result_of(sums[0], sums[1], sums[2], s.indices.size(), s);
}

EvalResult summarize(const SequenceScores& s, const std::vector<std::uint64_t>& subset) {
  double sums[kScores] = {0, 0, 0};
  std::size_t p = 0;
  for (const std::uint64_t index : subset) {
    while (p < s.indices.size() && s.indices[p] < index) ++p;
    if (p == s.indices.size() || s.indices[p] != index) {
      throw std::logic_error(fmt::format("evaluation: sequence {} was not scored", index));
    }
    sums[0] += s.loss_sum[p];
    sums[1] += s.tokens[p];
    sums[2] += s.correct[p];
  }
  return result_of(sums[0], sums[1], sums[2], subset.size(), s);
}

}  // namespace hpctrain::train
