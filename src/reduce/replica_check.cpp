#include "reduce/replica_check.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/types.h>

#include <cstring>

namespace hpctrain::reduce {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  return x ^ (x >> 33);
}

// A hash of the parameter's exact bits (any single flipped bit changes it).
std::int64_t bits_hash(const torch::Tensor& p) {
  const torch::Tensor t = p.detach().to(torch::kCPU).contiguous();
  const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
  std::uint64_t h = 0x9E3779B97F4A7C15ULL ^ t.nbytes();
  std::size_t i = 0;
  for (; i + 8 <= t.nbytes(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes + i, 8);
    h = mix(h ^ word) + i;
  }
  for (; i < t.nbytes(); ++i) h = mix(h ^ bytes[i]);
  std::int64_t out = 0;
  std::memcpy(&out, &h, sizeof out);
  return out;
}

}  // namespace

void check_replicas(const model::LanguageModel& model, comm::Communicator& comm, std::int64_t step) {
  const auto named = model.named_parameters();
  std::vector<std::int64_t> mine;
  for (const auto& item : named) mine.push_back(bits_hash(item.value()));
  std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(comm.size()));
  comm.allgather(mine.data(), all.data(), mine.size(), comm::DType::kInt64);
  for (std::size_t p = 0; p < mine.size(); ++p) {
    std::vector<int> differing;
    for (int r = 1; r < comm.size(); ++r) {
      if (all[static_cast<std::size_t>(r) * mine.size() + p] != all[p]) differing.push_back(r);
    }
    if (!differing.empty()) {
      throw ReplicaDivergence(fmt::format(
          "replicas diverged at step {}: parameter {} differs from rank 0's on rank{} {} (the first of {} parameters "
          "checked in order)",
          step, named[p].key(), differing.size() > 1 ? "s" : "", fmt::join(differing, ", "), mine.size()));
    }
  }
}

}  // namespace hpctrain::reduce
