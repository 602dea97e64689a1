#include "reduce/weights_broadcast.h"

#include <torch/utils.h>

namespace hpctrain::reduce {

void broadcast_parameters(model::LanguageModel& model, comm::Communicator& comm) {
  torch::NoGradGuard no_grad;
  for (auto& p : model.parameters()) {
    comm.broadcast(p.data_ptr(), static_cast<std::size_t>(p.numel()), comm::DType::kFloat32, 0);
  }
  // NCCL work is asynchronous to the host; a barrier on the same communicator
  // orders it before the first step reads the weights.
  comm.barrier();
}

}  // namespace hpctrain::reduce
