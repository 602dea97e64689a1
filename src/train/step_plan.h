// What the end of a step does, decided once from the experiment and the step
// (counted from 1): the loop acts on it, and the stop agreement reads it to
// know whether this step's agreed loss is needed now or may settle a step
// late. A stop agreed by the ranks, or a new best evaluation, adds a
// checkpoint to the plan's; the last step runs, in this order, the reducer's
// finish, the final evaluation, the test split, the sample and the checkpoint.
#pragma once

#include <cstdint>

#include "config/experiment.h"

namespace hpctrain::train {

struct StepPlan {
  bool last = false;        // step == training.steps
  bool stop_asked = false;  // step == training.stop_after, before the last
  bool record = false;      // a training record (logging.interval)
  bool evaluate = false;    // an evaluation (eval.interval), the final one when last
  bool checkpoint = false;  // a checkpoint (checkpoint.interval), always after the last

  // The agreed mean loss, a stop and a record need this step's agreement settled now.
  [[nodiscard]] bool needs_agreement_now() const { return last || stop_asked || record || evaluate || checkpoint; }
};

inline StepPlan plan_step(const config::Experiment& e, std::int64_t step) {
  StepPlan plan;
  plan.last = step == e.training.steps;
  plan.stop_asked = e.training.stop_after > 0 && step == e.training.stop_after && !plan.last;
  plan.record = e.logging.should_log(step, plan.last);
  plan.evaluate = e.eval.should_eval(step, plan.last);
  plan.checkpoint = e.checkpoint.should_checkpoint(step, plan.last);
  return plan;
}

}  // namespace hpctrain::train
