#include "reduce/reducer.h"

#include <fmt/format.h>

#include "comm/consensus.h"
#include "comm/mpi_communicator.h"
#ifdef HPCTRAIN_HAVE_NCCL
#include "comm/nccl_communicator.h"
#endif
#ifdef HPCTRAIN_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif
#include "reduce/ddap_reducer.h"
#include "reduce/ddp_reducer.h"
#include "reduce/flat_parameters.h"
#include "reduce/local_reducer.h"

namespace hpctrain::reduce {
namespace {

// A communicator of the reducer's own for a model on `device`: NCCL on a GPU;
// on the CPU an MPI one, a duplicate of the world's (merges in flight must not
// interleave with anyone else's collectives, and its byte count is the
// reducer's traffic alone).
std::unique_ptr<comm::Communicator> own_communicator(const at::Device& device, comm::World& world) {
  if (device.is_cuda()) {
#ifdef HPCTRAIN_HAVE_NCCL
#ifdef HPCTRAIN_TORCH_CUDA
    // The stream this thread computes on now, as LibTorch sees it: NCCL waits for its work.
    const cudaStream_t compute = c10::cuda::getCurrentCUDAStream(device.index()).stream();
#else
    const cudaStream_t compute = cudaStreamLegacy;  // unreachable: a CPU LibTorch puts no model on a GPU
#endif
    auto nccl = std::make_unique<comm::NcclCommunicator>(world, compute);
    // Both pick the GPU by cluster::gpu_for_local_rank; a mismatch would reduce another rank's device memory.
    comm::on_all_ranks(world.comm(), [&] {
      if (nccl->cuda_device() != device.index()) {
        throw std::logic_error(
            fmt::format("NCCL drives GPU {} but the model is on {}", nccl->cuda_device(), device.str()));
      }
    });
    return nccl;
#else
    throw std::runtime_error(
        "training on a GPU needs the NCCL backend, and this hpctrain was built without it "
        "(CUDA and NCCL were not found, or -DHPCTRAIN_WITH_NCCL=OFF)");
#endif
  }
  return std::make_unique<comm::MpiCommunicator>(world.mpi_comm(), world.collective_timeout(), world.wait_strategy());
}

}  // namespace

optim::GradClip Reducer::optimizer_step(double lr, double max_norm) {
  optim::set_learning_rate(optimizer_, lr);
  return step_optimizer(max_norm);
}

optim::GradClip Reducer::step_optimizer(double max_norm) {
  optim::GradClip clip;
  if (max_norm > 0) clip = optim::grad_clip(model_.parameters(), max_norm);
  optim::adamw_step(optimizer_, clip.scale);
  return clip;
}

at::Tensor Reducer::evaluation_weights() const { return flatten_parameters(model_); }

void Reducer::with_weights(const at::Tensor& flat, const std::function<void()>& evaluate) {
  const at::Tensor training = flatten_parameters(model_);
  unflatten_into_parameters(flat, model_);
  try {
    evaluate();
  } catch (...) {
    unflatten_into_parameters(training, model_);
    throw;
  }
  unflatten_into_parameters(training, model_);
}

std::unique_ptr<Reducer> make_reducer(const config::ParallelConfig& parallel, model::LanguageModel& model,
                                      optim::AdamW& optimizer, comm::World& world) {
  const at::Device device = model.parameters().front().device();
  switch (parallel.reducer) {
    case config::ReducerKind::kDdp: {
      if (world.size() == 1 && !device.is_cuda()) return std::make_unique<LocalReducer>(model, optimizer);
      // A communicator of its own, whose byte count is the gradients' alone.
      auto owned = own_communicator(device, world);
      comm::Communicator& gradients = *owned;
      return std::make_unique<DdpReducer>(parallel, model, optimizer, gradients, world.comm(), std::move(owned));
    }
    case config::ReducerKind::kDdap: {
      auto owned = own_communicator(device, world);
      comm::Communicator& merges = *owned;
      return std::make_unique<DdapReducer>(parallel, model, optimizer, merges, world.comm(), std::move(owned));
    }
  }
  throw std::invalid_argument("parallel.reducer: a reducer make_reducer does not build");
}

}  // namespace hpctrain::reduce
