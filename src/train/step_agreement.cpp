#include "train/step_agreement.h"

namespace hpctrain::train {

StepAgreement::~StepAgreement() {
  // The buffers must outlive the collectives that write them.
  for (auto& p : pending_) p->work->wait();
}

void StepAgreement::post(std::int64_t step, const StepVote& vote) {
  auto p = std::make_unique<Pending>(Pending{step,
                                             {static_cast<float>(vote.loss), vote.stop ? 1.0F : 0.0F,
                                              vote.terminated ? 1.0F : 0.0F, vote.unreadable ? 1.0F : 0.0F},
                                             nullptr});
  p->work = comm_.allreduce_async(p->values.data(), p->values.size(), comm::DType::kFloat32, comm::ReduceOp::kSum);
  pending_.push_back(std::move(p));
}

std::vector<AgreedStep> StepAgreement::settle_through(std::int64_t step) {
  std::vector<AgreedStep> settled;
  while (!pending_.empty() && pending_.front()->step <= step) {
    Pending& p = *pending_.front();
    p.work->wait();
    settled.push_back(
        {p.step, static_cast<double>(p.values[0]) / comm_.size(), p.values[1] > 0, p.values[2] > 0, p.values[3] > 0});
    pending_.pop_front();
  }
  return settled;
}

}  // namespace hpctrain::train
