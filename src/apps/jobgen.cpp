// jobgen: `jobgen EXP.toml | sbatch` renders the experiment's batch script;
// `jobgen status|logs|cancel` watch and stop the runs it starts; `jobgen
// render` renders any Mustache template. Parses the command line and turns an
// escaping exception into one error line and a non-zero exit.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/program_edge.h"
#include "jobgen/batch_script.h"
#include "jobgen/data_file.h"
#include "jobgen/mustache.h"
#include "jobgen/run_cancel.h"
#include "jobgen/run_logs.h"
#include "jobgen/run_status.h"
#include "jobgen/search_path.h"
#include "support/build_info.h"
#include "support/text.h"

namespace {

// Where templates and cluster profiles come from (jobgen/search_path.h).
hpctrain::jobgen::JobgenPaths jobgen_paths(const std::string& experiment, const std::string& templates_dir = "") {
  std::error_code ec;
  return hpctrain::jobgen::find_jobgen_paths({
      .experiment = experiment,
      .jobgen_home = std::getenv("JOBGEN_HOME"),  // NOLINT(concurrency-mt-unsafe): read before any thread
      .self_exe = std::filesystem::read_symlink("/proc/self/exe", ec),
      .build_source_dir = JOBGEN_BUILD_SOURCE_DIR,
      .templates_dir = templates_dir,
  });
}

}  // namespace

int main(int argc, char** argv) {
  // `jobgen exp.toml ...` is short for `jobgen script exp.toml ...`, and
  // `jobgen explain exp.toml ...` for `jobgen script exp.toml ... --explain`.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0].size() > 5 && args[0].compare(args[0].size() - 5, 5, ".toml") == 0) {
    args.insert(args.begin(), "script");
  } else if (!args.empty() && args[0] == "explain") {  // `jobgen explain EXP.toml ...`
    args[0] = "script";
    args.emplace_back("--explain");
  }
  CLI::App app{"jobgen: SLURM batch scripts from hpctrain experiments"};
  hpctrain::apps::one_line_failures(app, "jobgen");
  app.footer(
      "Shortcuts: `jobgen EXP.toml ...` is `jobgen script EXP.toml ...`; `jobgen explain EXP.toml ...` is `jobgen "
      "script EXP.toml ... --explain`.");
  app.set_version_flag("--version", [] {
    std::string places;
    try {
      places = "templates and cluster profiles, searched in this order:\n" + jobgen_paths("").describe();
    } catch (const std::exception& e) {
      places = fmt::format("templates and cluster profiles: error: {}", e.what());
    }
    return hpctrain::support::version_line("jobgen") + "\n" + places;
  });
  app.require_subcommand(1);
  std::string experiment_file;
  std::vector<std::string> overrides;
  std::string cluster = "default";  // env/clusters/default.toml: nothing site-specific
  std::string template_name = "sbatch";
  std::string templates_dir;  // --templates: a place the user names, searched first
  const char* templates_help =
      "a directory you trust holding templates/ and clusters/ (or env/clusters/), searched first";
  bool check_only = false;
  auto* script =
      app.add_subcommand("script", "Print the experiment's batch script (jobgen EXP.toml is short for this)");
  script->add_option("EXPERIMENT", experiment_file, "experiment TOML file")->required();
  script->add_option("--set", overrides, "override a key: section.key=value (repeatable)");
  script->add_option(
      "--cluster", cluster,
      "cluster profile: a name in env/clusters/ or a .toml file (default: `default`, sbatch's own defaults)");
  script->add_option("--template", template_name, "batch template: a name in templates/ or a .mustache file");
  script->add_option("--templates", templates_dir, templates_help);
  auto* check_flag = script->add_flag("--check", check_only, "validate only: print nothing but a summary");
  hpctrain::jobgen::Dependencies dependencies;
  script->add_option("--after", dependencies.after, "JOBID[:afterok|afterany|afternotok|aftercorr] (repeatable)");
  script->add_flag("--singleton", dependencies.singleton, "at most one running job of this name");
  std::string manifest_file;
  script->add_option("--manifest", manifest_file, "also write the sweep's manifest (index -> overrides) here");
  bool submit = false;
  auto* submit_flag =
      script->add_flag("--submit", submit, "create the log directory, submit with sbatch, print the job id");
  bool prepare_data = false;
  script->add_flag("--prepare", prepare_data,
                   "the job that prepares the data set on one node's CPUs instead (template prepare); submit training "
                   "--after it");
  bool explain_only = false;
  auto* explain_flag =
      script->add_flag("--explain", explain_only, "show which TOML line, profile or override produced each directive");
  // One of them at a time: each replaces the script on stdout with its own output.
  explain_flag->excludes(check_flag)->excludes(submit_flag);
  check_flag->excludes(submit_flag);
  std::string template_file;
  std::string data_file;
  std::string escape = "none";
  std::vector<std::string> partial_files;
  auto* render = app.add_subcommand("render", "Render a Mustache template with data from a TOML or JSON file");
  render->add_option("TEMPLATE", template_file, "Mustache template file")->required();
  render->add_option("--data", data_file, "TOML or JSON data")->required();
  render->add_option("--escape", escape, "what {{x}} does to values: none, or html (the specification's)")
      ->check(CLI::IsMember({"none", "html"}));
  render->add_option("--partial", partial_files, "NAME=FILE: a partial (repeatable)");
  std::string run;
  auto* status = app.add_subcommand("status", "One table for a run or a sweep: SLURM state, step, losses, ETA");
  status->add_option("RUN", run, "a run directory, or the experiment TOML whose job.run_dir it is")->required();
  status->add_option("--set", overrides, "with an experiment: override a key (repeatable)");
  status->add_option("--cluster", cluster, "with an experiment: its cluster profile");
  status->add_option("--templates", templates_dir, templates_help);
  hpctrain::jobgen::LogsRequest logs_request;
  std::string logs_dir;
  long logs_index = -1;
  auto* logs = app.add_subcommand("logs", "Print a run's batch output, every job of it in order");
  logs->add_option("RUN", logs_dir, "a run directory, or the experiment TOML whose job.run_dir it is")->required();
  logs->add_option("--set", overrides, "with an experiment: override a key (repeatable)");
  logs->add_option("--cluster", cluster, "with an experiment: its cluster profile");
  logs->add_option("--templates", templates_dir, templates_help);
  logs->add_flag("--follow,-f", logs_request.follow, "keep printing across requeues and resubmissions until it ends");
  logs->add_option("--index", logs_index, "the array index, for a sweep")->check(CLI::NonNegativeNumber);
  std::string cancel_dir;
  auto* cancel = app.add_subcommand("cancel", "Cancel a run's queued and running jobs (one squeue, one scancel)");
  cancel->add_option("RUN", cancel_dir, "a run directory, or the experiment TOML whose job.run_dir it is")->required();
  cancel->add_option("--set", overrides, "with an experiment: override a key (repeatable)");
  cancel->add_option("--cluster", cluster, "with an experiment: its cluster profile");
  cancel->add_option("--templates", templates_dir, templates_help);
  // status, logs and cancel take a run directory or the experiment that names one.
  auto run_dir_of = [&](const std::string& given) -> std::filesystem::path {
    if (!given.ends_with(".toml")) return given;
    return hpctrain::jobgen::plan_batch_job(given, overrides, cluster, {}, jobgen_paths(given, templates_dir))
        .experiment.job.run_dir;
  };
  if (const auto done = hpctrain::apps::parse(app, args)) return *done;
  return hpctrain::apps::at_the_edge("jobgen", [&] {
    if (*script) {
      const auto paths = jobgen_paths(experiment_file, templates_dir);
      auto job = hpctrain::jobgen::plan_batch_job(experiment_file, overrides, cluster, dependencies, paths);
      if (prepare_data) {
        job = hpctrain::jobgen::preparation_job(std::move(job), dependencies);
        if (template_name == "sbatch") template_name = "prepare";
      }
      hpctrain::jobgen::ask_sbatch_about_extra(job.request.site);
      const std::string text = hpctrain::jobgen::render_batch_script(job, template_name, paths);
      if (!manifest_file.empty()) {
        std::ofstream manifest(manifest_file, std::ios::trunc);
        manifest << hpctrain::jobgen::sweep_manifest(job.sweep).dump(2) << '\n';
        if (!manifest.flush()) throw std::runtime_error(manifest_file + ": cannot write the sweep manifest");
      }
      if (explain_only) {
        std::cout << hpctrain::jobgen::explain(job);
        // Where the files that decide what the job runs came from.
        const std::filesystem::path template_path = paths.template_file(template_name);
        fmt::print("  template {:<43} <- {}\n", hpctrain::support::printable(template_path.string()),
                   paths.origin(template_path));
        for (const auto& file : job.profile.chain) {
          fmt::print("  profile {:<44} <- {}\n", hpctrain::support::printable(file), paths.origin(file));
        }
      } else if (submit) {
        fmt::print("{}\n", hpctrain::jobgen::submit(job, text));
      } else if (check_only) {
        fmt::print("ok: {} renders {} #SBATCH directives with profile {} (config sha256 {})\n", experiment_file,
                   job.directives.size(), job.profile.name, job.config_sha256);
      } else {
        std::cout << text;
      }
      return 0;
    }
    if (*status) {
      std::vector<std::string> warnings;
      const std::string table = hpctrain::jobgen::status_table(run_dir_of(run), warnings);
      for (const auto& w : warnings) fmt::print(stderr, "jobgen: warning: {}\n", w);
      std::cout << table;
      return 0;
    }
    if (*logs) {
      logs_request.run_dir = run_dir_of(logs_dir);
      if (logs_index >= 0) logs_request.index = logs_index;
      return hpctrain::jobgen::print_logs(logs_request, stdout);
    }
    if (*cancel) {
      std::vector<std::string> warnings;
      const std::string done = hpctrain::jobgen::cancel_run(run_dir_of(cancel_dir), warnings);
      for (const auto& w : warnings) fmt::print(stderr, "jobgen: warning: {}\n", w);
      fmt::print("{}\n", done);
      return 0;
    }
    hpctrain::jobgen::Partials partials;
    for (const auto& item : partial_files) {
      const auto eq = item.find('=');
      if (eq == std::string::npos) throw hpctrain::jobgen::RenderError("--partial " + item + ": expected NAME=FILE");
      partials[item.substr(0, eq)] = hpctrain::jobgen::read_text_file(item.substr(eq + 1));
    }
    const hpctrain::jobgen::Escape escaper =
        escape == "html" ? hpctrain::jobgen::Escape(hpctrain::jobgen::escape_html)
                         : hpctrain::jobgen::Escape([](const std::string& value) { return value; });
    std::cout << hpctrain::jobgen::render_mustache(hpctrain::jobgen::read_text_file(template_file),
                                                   hpctrain::jobgen::load_data_file(data_file),
                                                   hpctrain::jobgen::partials_from(partials), escaper, template_file);
    return 0;
  });
}
