#include "reduce/merge_wire.h"

#include <stdexcept>

#include "reduce/quantized_merge_wire.h"

namespace hpctrain::reduce {
namespace {

// The values as they are; M by the rule's own collectives.
class Fp32MergeWire final : public MergeWire {
 public:
  explicit Fp32MergeWire(const MergeRule& rule) : rule_(rule) {}
  [[nodiscard]] std::string describe() const override { return "fp32"; }
  [[nodiscard]] Outgoing encode(const at::Tensor& values) const override { return {values, at::Tensor()}; }
  [[nodiscard]] at::Tensor merge(const at::Tensor& payload, std::int64_t /*numel*/,
                                 comm::Communicator& comm) const override {
    return merged_delta(payload, rule_, comm);
  }

 private:
  MergeRule rule_;
};

}  // namespace

std::unique_ptr<MergeWire> make_merge_wire(const config::ParallelConfig& parallel, const MergeRule& rule, int ranks) {
  switch (parallel.merge_wire) {
    case config::MergeWireKind::kFp32: return std::make_unique<Fp32MergeWire>(rule);
    case config::MergeWireKind::kInt8:
    case config::MergeWireKind::kInt4:
    case config::MergeWireKind::kInt2:
      if (rule.kind == config::MergeKind::kTies) {
        throw std::invalid_argument("a quantized parallel.merge_wire carries a mean; ties needs every rank's signs");
      }
      return make_quantized_wire(parallel.merge_wire, ranks);
  }
  throw std::invalid_argument("parallel.merge_wire: a wire make_merge_wire does not build");
}

std::unique_ptr<MergeWire> make_quantized_wire(config::MergeWireKind kind, int ranks) {
  if (kind == config::MergeWireKind::kFp32) throw std::invalid_argument("make_quantized_wire: fp32 is not quantized");
  const int bits = kind == config::MergeWireKind::kInt8 ? 8 : kind == config::MergeWireKind::kInt4 ? 4 : 2;
  return std::make_unique<QuantizedMergeWire>(ranks, bits);
}

}  // namespace hpctrain::reduce
