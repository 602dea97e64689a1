#include "cli/train_command.h"

#include "cli/agreed_failure.h"
#include "cli/world_options.h"
#include "cluster/environment.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "handles/mpi.h"
#include "train/preemption.h"
#include "train/trainer.h"

namespace hpctrain::cli {

int run_train(const std::string& experiment_file, const std::vector<std::string>& overrides) {
  const auto experiment = config::load_experiment(experiment_file, overrides);
  const auto env = cluster::Environment::current();
  handles::MpiRuntime mpi;
  // From here on (MPI's library may have taken SIGUSR1 for itself) a signal
  // is answered with exit 75 until the trainer can checkpoint instead.
  train::exit_on_preemption_signals(experiment.checkpoint.signal);
  const int status = finalize_after_agreed_failure(mpi, [&] {
    comm::World world(mpi, env, world_options(experiment.parallel));
    train::Trainer trainer(experiment, world, env);
    const auto summary = trainer.run();
    world.comm().barrier();
    return summary.preempted ? config::kRequeueExitCode : 0;
  });
  mpi.set_exit_status(status);
  return status;
}

}  // namespace hpctrain::cli
