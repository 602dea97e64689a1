#include "reduce/ddp_residuals.h"

#include <fmt/format.h>
#include <torch/types.h>

namespace hpctrain::reduce {

std::string ddp_residual_name(int rank) { return fmt::format("ddp_residual/rank-{:05d}", rank); }

void save_ddp_residual(ckpt::Snapshot& snapshot, const at::Tensor& residual, comm::Communicator& control) {
  if (!residual.defined()) return;
  const at::Tensor mine = residual.to(torch::kCPU).contiguous();
  if (snapshot.sharded) {
    snapshot.tensors.emplace_back(ddp_residual_name(control.rank()), mine.clone());
    return;
  }
  // One file: each rank's residual broadcast in turn, kept by rank 0.
  for (int r = 0; r < control.size(); ++r) {
    at::Tensor values = r == control.rank() ? mine : torch::empty_like(mine);
    control.broadcast(values.data_ptr(), static_cast<std::size_t>(values.numel()), comm::DType::kFloat32, r);
    if (control.rank() == 0) snapshot.tensors.emplace_back(ddp_residual_name(r), r == 0 ? mine.clone() : values);
  }
}

at::Tensor load_ddp_residual(const ckpt::CheckpointReader& checkpoint, std::int64_t numel, int rank, int world) {
  const auto written_by = static_cast<int>(checkpoint.info().world_size);
  if (!checkpoint.has(ddp_residual_name(0))) return {};
  if (written_by == world) return checkpoint.tensor(ddp_residual_name(rank), numel, torch::kFloat32);
  at::Tensor owed = torch::zeros({numel}, torch::kFloat32);
  for (int r = 0; r < written_by; ++r) owed += checkpoint.tensor(ddp_residual_name(r), numel, torch::kFloat32);
  return owed / static_cast<double>(world);
}

}  // namespace hpctrain::reduce
