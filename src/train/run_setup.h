// What every command that runs a model sets up the same way: compute threads
// (training.threads, else the rank's share of the node), the device, and
// the data set (prepared on rank 0 when it is missing).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include <torch/types.h>

#include "cluster/environment.h"
#include "comm/world.h"
#include "config/experiment.h"
#include "runtime/threads.h"
#include "train/run_log.h"

namespace hpctrain::train {

runtime::ThreadPlan thread_plan(const config::Experiment& experiment, const cluster::Environment& env,
                                int ranks_on_node);

// training.device: cpu, cuda (this rank's GPU, cluster/gpu_placement.h), or
// auto (cuda when LibTorch sees a GPU). Collective: throws the same error on
// every rank when any rank has no usable GPU for cuda, or when auto finds GPUs
// on some ranks only.
torch::Device choose_device(config::Device requested, comm::World& world);

// What to say when training.device = "auto" chose the CPU on a node whose
// driver shows NVIDIA GPUs under `dev` (cluster/nvidia_devices.h): they would
// sit idle, because this LibTorch is CPU-only or sees no GPU. Empty otherwise.
std::string idle_gpus_warning(config::Device requested, const torch::Device& chosen,
                              const std::filesystem::path& dev = "/dev");

// Bitwise reruns on a GPU, set before the first kernel: LibTorch's
// deterministic algorithms (an op that has none then throws instead of running
// nondeterministically), no cuDNN autotuning, and cuBLAS with a fixed workspace
// (CUBLAS_WORKSPACE_CONFIG=:4096:8, which cuBLAS reads when it starts; a value
// the user set is kept). Returns what it did, for the log.
std::string make_gpu_deterministic();

// Rank 0 prepares the data set when it has no meta.json yet; every rank waits.
void ensure_prepared(const config::Experiment& experiment, comm::World& world, RunLog& log);

}  // namespace hpctrain::train
