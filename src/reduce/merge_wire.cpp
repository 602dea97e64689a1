#include "reduce/merge_wire.h"

#include <stdexcept>

#include "reduce/encoded_mean_wire.h"
#include "reduce/value_codec.h"

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
    case config::WireCodec::kFp32: return std::make_unique<Fp32MergeWire>(rule);
    case config::WireCodec::kBf16:
    case config::WireCodec::kInt8:
    case config::WireCodec::kInt4:
    case config::WireCodec::kInt2:
      if (rule.kind == config::MergeKind::kTies) {
        throw std::invalid_argument("an encoded parallel.merge_wire carries a mean; ties needs every rank's signs");
      }
      return make_encoded_wire(parallel.merge_wire, ranks);
  }
  throw std::invalid_argument("parallel.merge_wire: a wire make_merge_wire does not build");
}

std::unique_ptr<MergeWire> make_encoded_wire(config::WireCodec kind, int ranks) {
  return std::make_unique<EncodedMeanWire>(ranks, make_value_codec(kind));
}

}  // namespace hpctrain::reduce
