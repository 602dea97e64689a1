// hpctrain: the trainer binary. Parses the command line, runs one subcommand,
// and turns any escaping exception into one error line and a non-zero exit.
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <cstdlib>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>

#include "apps/program_edge.h"
#include "cli/ckpt_commands.h"
#include "cli/doctor_command.h"
#include "cli/hostnames_command.h"
#include "cli/inference_commands.h"
#include "cli/plan_command.h"
#include "cli/prepare_command.h"
#include "cli/train_command.h"
#include "comm/nccl_backend.h"
#include "data/sentencepiece_engine.h"
#include "handles/hdf5.h"
#include "handles/mpi.h"
#include "runtime/libtorch_build.h"
#include "runtime/openblas_kernels.h"
#include "support/build_info.h"

int main(int argc, char** argv) {
  // Before anything starts: OpenBLAS's kernels are chosen as it loads.
  hpctrain::runtime::restart_on_fitting_openblas_kernels(argv, hpctrain::cluster::Environment::current());
  // `hpctrain exp.toml ...` is short for `hpctrain train exp.toml ...`.
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() > 1 && args[1].size() > 5 && args[1].compare(args[1].size() - 5, 5, ".toml") == 0) {
    args.insert(args.begin() + 1, "train");
  }
  CLI::App app{"hpctrain: data-parallel language-model training for SLURM clusters"};
  hpctrain::apps::one_line_failures(app, "hpctrain");
  app.set_version_flag("--version", [] {
    return hpctrain::support::version_line("hpctrain") + "\nLibTorch: " + hpctrain::runtime::describe_libtorch() +
           "\nSentencePiece plugin: " + hpctrain::data::sentencepiece_plugin_path() +
           "\nNCCL backend: " + hpctrain::comm::nccl_backend_summary() +
           "\nHDF5: " + hpctrain::handles::hdf5_library_version() +
           "\nMPI: " + hpctrain::handles::MpiRuntime::library_version();
  });
  app.require_subcommand(1);

  std::string expression;
  auto* hostnames = app.add_subcommand("hostnames", "Expand a SLURM hostlist, one host per line (as scontrol)");
  hostnames->add_option("EXPR", expression, "hostlist expression, e.g. 'node[01-03,7],gpu-a[1-2]'")->required();

  auto* hostlist = app.add_subcommand("hostlist", "Compress hosts to a SLURM hostlist (as scontrol show hostlist)");
  hostlist->add_option("EXPR", expression, "hosts, e.g. 'n1,n2,n3,n5'")->required();

  hpctrain::cli::DoctorOptions doctor_options;
  double timeout_s = 300;
  bool no_bandwidth = false;
  auto* doctor = app.add_subcommand("doctor", "Bootstrap as training would, print what was resolved, measure busbw");
  doctor->add_option("--timeout", timeout_s, "collective timeout in seconds")->check(CLI::Range(1e-3, 1e6));
  doctor->add_option("--min-bytes", doctor_options.min_bytes, "smallest allreduce size")->check(CLI::PositiveNumber);
  doctor->add_option("--max-bytes", doctor_options.max_bytes, "largest allreduce size")->check(CLI::PositiveNumber);
  doctor->add_flag("--no-bandwidth", no_bandwidth, "skip the allreduce bandwidth tables");
  doctor->add_flag("--nccl", doctor_options.nccl,
                   "also build the NCCL communicator as GPU training does: each rank's GPU, the libraries, busbw");
  std::map<std::string, hpctrain::comm::WaitStrategy> wait_names;
  std::vector<std::string> wait_words;
  for (const auto strategy : hpctrain::comm::kWaitStrategies) {
    wait_names[hpctrain::comm::to_string(strategy)] = strategy;
    wait_words.push_back(hpctrain::comm::to_string(strategy));
  }
  std::string wait;
  doctor->add_option("--wait", wait, "how a rank waits for a collective, as the experiment's parallel.comm_wait")
      ->check(CLI::IsMember(wait_words));

  std::string experiment_file;
  std::vector<std::string> overrides;
  auto* prepare = app.add_subcommand("prepare", "Prepare the experiment's data set ([data]) and print statistics");
  prepare->add_option("EXPERIMENT", experiment_file, "experiment TOML file")->required();
  prepare->add_option("--set", overrides, "override a key: section.key=value (repeatable)");

  auto* train = app.add_subcommand("train", "Train the experiment (hpctrain EXP.toml is short for this)");
  train->add_option("EXPERIMENT", experiment_file, "experiment TOML file")->required();
  train->add_option("--set", overrides, "override a key: section.key=value (repeatable)");

  hpctrain::cli::PlanOptions plan_options;
  auto* plan = app.add_subcommand(
      "plan",
      "Which reducer for this link: measure the step and the model's allreduce on these ranks, weigh DDP and DDAP");
  plan->add_option("EXPERIMENT", experiment_file, "experiment TOML file")->required();
  plan->add_option("--set", overrides, "override a key: section.key=value (repeatable)");
  plan->add_option("--steps", plan_options.steps, "timed steps per measurement")->check(CLI::Range(1, 1000));

  std::string target;
  hpctrain::cli::EvalOptions eval_options;
  auto* eval = app.add_subcommand("eval", "Evaluate a run's newest checkpoint (or a checkpoint file) on a whole split");
  eval->add_option("RUN_OR_CHECKPOINT", target, "run directory or .h5 checkpoint")->required();
  eval->add_option("--set", overrides, "override a key of the stored config: section.key=value");
  eval->add_option("--split", eval_options.split, "val (default) or test")->check(CLI::IsMember({"val", "test"}));
  eval->add_flag("--sample", eval_options.sample,
                 "the periodic evaluations' sample (eval.samples sequences) instead of the whole split");
  // --best and --ema: the same two choices for eval, generate and export.
  const auto weights_flags = [](CLI::App* command, hpctrain::train::WeightsChoice& weights) {
    command->add_flag("--best", weights.best,
                      "the run's best checkpoint (lowest evaluation loss, checkpoint.keep_best) instead of its newest");
    command->add_flag("--ema", weights.ema, "the moving average of the weights (training.ema_decay)");
  };
  weights_flags(eval, eval_options.weights);

  hpctrain::cli::GenerateOptions generate_options;
  auto* generate = app.add_subcommand("generate", "Sample text from a trained causal model");
  generate->add_option("RUN_OR_CHECKPOINT", target, "run directory or .h5 checkpoint")->required();
  generate->add_option("--prompt", generate_options.prompt, "text to continue (default: eval.prompt)");
  generate
      ->add_option(
          "--tokens", generate_options.tokens,
          "tokens to sample at most; the sample ends earlier where the model writes </s> (default: eval.sample_tokens)")
      ->check(CLI::Range(0, 1 << 20));
  // NaN compares false both ways, so the range is written as what must hold.
  const CLI::Validator temperature_range(
      [](const std::string& text) {
        const double value = std::strtod(text.c_str(), nullptr);
        return value >= 1e-6 && value <= 100.0 ? std::string() : "must be a number in [1e-06, 100] (eval.temperature)";
      },
      "[1e-06, 100]");
  generate->add_option("--temperature", generate_options.temperature, "softmax temperature")->check(temperature_range);
  generate->add_option("--top-k", generate_options.top_k, "sample among the k likeliest tokens; 0 = all")
      ->check(CLI::Range(0, 1 << 20));
  generate->add_option("--seed", generate_options.seed, "sampling seed (default: job.seed)");
  weights_flags(generate, generate_options.weights);

  auto* ckpt = app.add_subcommand("ckpt", "Inspect, verify or export checkpoints");
  ckpt->require_subcommand(1);
  bool inspect_all = false;
  bool inspect_config = false;
  auto* inspect = ckpt->add_subcommand("inspect", "Provenance, position and contents of a checkpoint");
  inspect->add_option("RUN_OR_CHECKPOINT", target, "run directory (its newest) or .h5 checkpoint")->required();
  inspect->add_flag("--all", inspect_all, "list every dataset with its type and shape");
  inspect->add_flag("--config", inspect_config, "print the stored experiment config");
  std::vector<std::string> verify_targets;
  auto* verify = ckpt->add_subcommand("verify", "Check checkpoints end to end (exit 1 if any is bad)");
  verify->add_option("RUN_OR_CHECKPOINT", verify_targets, "run directories or .h5 files")->required();
  std::string export_file;
  std::string export_format = "hpctrain";
  auto* export_cmd = ckpt->add_subcommand("export", "Write a checkpoint's model weights as safetensors");
  export_cmd->add_option("RUN_OR_CHECKPOINT", target, "run directory (its newest) or .h5 checkpoint")->required();
  export_cmd->add_option("--out", export_file, "the .safetensors file (--format hpctrain) or directory (hf) to write")
      ->required();
  export_cmd
      ->add_option("--format", export_format,
                   "hpctrain: one file, hpctrain's tensor names; hf: a Hugging Face model directory (gpt, llama, "
                   "post-LayerNorm bert)")
      ->check(CLI::IsMember({"hpctrain", "hf"}));
  hpctrain::train::WeightsChoice export_weights;
  weights_flags(export_cmd, export_weights);

  args.erase(args.begin());
  if (const auto done = hpctrain::apps::parse(app, args)) return *done;
  // LibTorch's own errors carry a backtrace in what(): the message alone is printed.
  const auto describe = [](const std::exception& e) {
    const auto* torch_error = dynamic_cast<const c10::Error*>(&e);
    return std::string(torch_error != nullptr ? torch_error->what_without_backtrace() : e.what());
  };
  return hpctrain::apps::at_the_edge(
      "hpctrain",
      [&] {
        if (*hostnames) {
          hpctrain::cli::run_hostnames(expression, std::cout);
        } else if (*hostlist) {
          hpctrain::cli::run_hostlist(expression, std::cout);
        } else if (*eval) {
          hpctrain::cli::run_eval(target, overrides, eval_options);
        } else if (*generate) {
          hpctrain::cli::run_generate(target, generate_options);
        } else if (*inspect) {
          hpctrain::cli::run_ckpt_inspect(target, inspect_all, inspect_config, std::cout);
        } else if (*verify) {
          return hpctrain::cli::run_ckpt_verify(verify_targets, std::cout) == 0 ? 0 : 1;
        } else if (*export_cmd) {
          hpctrain::cli::run_ckpt_export(target, export_file, export_weights, export_format, std::cout);
        } else if (*train) {
          return hpctrain::cli::run_train(experiment_file, overrides);
        } else if (*prepare) {
          hpctrain::cli::run_prepare(experiment_file, overrides);
        } else if (*plan) {
          hpctrain::cli::run_plan(experiment_file, overrides, plan_options);
        } else if (*doctor) {
          doctor_options.collective_timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
          doctor_options.bandwidth = !no_bandwidth;
          if (!wait.empty()) doctor_options.wait = wait_names.at(wait);
          hpctrain::cli::run_doctor(doctor_options);
        }
        return 0;
      },
      describe);
}
