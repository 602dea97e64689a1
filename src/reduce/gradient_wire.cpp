#include "reduce/gradient_wire.h"

#include "reduce/allreduce_wire.h"
#include "reduce/encoded_gradient_wire.h"
#include "reduce/reduce_scatter_wire.h"

namespace hpctrain::reduce {

std::unique_ptr<GradientWire> make_gradient_wire(const config::ParallelConfig& parallel, comm::Communicator& comm) {
  if (parallel.zero == 1) return std::make_unique<ReduceScatterWire>(comm, parallel.bf16_compression);
  if (parallel.gradient_wire != config::WireCodec::kFp32) {
    return std::make_unique<EncodedGradientWire>(comm, parallel.gradient_wire);
  }
  return std::make_unique<AllreduceWire>(comm, parallel.bf16_compression);
}

}  // namespace hpctrain::reduce
