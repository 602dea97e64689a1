#include "jobgen/batch_script.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "config/config_error.h"
#include "jobgen/data_file.h"
#include "jobgen/encoding.h"
#include "jobgen/mustache.h"
#include "support/sha256.h"

namespace hpctrain::jobgen {
namespace {

// The first line of a command's output; empty when it fails.
std::string first_line_of(const std::string& command) {
  std::array<char, 256> buffer{};
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return {};
  std::string out;
  while (fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) out += buffer.data();
  return out.substr(0, out.find('\n'));
}

std::string git_provenance(const std::filesystem::path& experiment) {
  const std::string dir = shell_word(std::filesystem::absolute(experiment).parent_path().string(), "experiment path");
  const std::string commit = first_line_of("git -C " + dir + " rev-parse HEAD 2>/dev/null");
  if (commit.empty()) return "not in a git repository";
  const std::string dirty = first_line_of("git -C " + dir + " status --porcelain --untracked-files=no 2>/dev/null");
  return dirty.empty() ? commit : commit + " (dirty: uncommitted changes)";
}

void add(std::vector<Directive>& into, const std::string& flag, const Sourced& s) {
  if (!s.value.empty()) into.push_back({flag, s.value, s.source});
}

}  // namespace

BatchJob plan_batch_job(const std::string& experiment_file, const std::vector<std::string>& overrides,
                        const std::string& cluster, const JobgenPaths& paths) {
  BatchJob job{config::load_experiment(experiment_file, overrides),
               load_cluster_profile(cluster, paths.clusters),
               {},
               {},
               {},
               {}};
  job.request = read_slurm_request(experiment_file, overrides, job.experiment, job.profile);
  const SlurmRequest& r = job.request;
  auto& d = job.directives;
  add(d, "--job-name", r.job_name);
  add(d, "--partition", r.partition);
  add(d, "--account", r.account);
  add(d, "--qos", r.qos);
  add(d, "--constraint", r.constraint);
  add(d, "--nodes", r.nodes);
  add(d, "--ntasks-per-node", r.ntasks_per_node);
  if (r.cpus_per_task.value != "0") add(d, "--cpus-per-task", r.cpus_per_task);
  if (r.gpus_per_node.value != "0") add(d, "--gpus-per-node", r.gpus_per_node);
  add(d, "--mem", r.mem);
  add(d, "--time", r.time);
  // B: signals the batch shell, whose trap forwards it to the step (DESIGN §7).
  add(d, "--signal",
      {fmt::format("B:{}@{}", r.signal.value, r.signal_lead_s.value), r.signal.source + ", " + r.signal_lead_s.source});
  d.push_back({"--requeue", "", "preemption: the job requeues itself"});
  d.push_back({"--open-mode", "append", "one log across requeues"});
  add(d, "--output", {r.log_dir.value + "/%x-%j.out", r.log_dir.source});
  // The config as embedded in the script: the resolved TOML, ending in one newline.
  std::string& text = job.experiment.resolved_toml;
  while (!text.empty() && text.back() == '\n') text.pop_back();
  text += '\n';
  job.config_sha256 = support::to_hex(support::sha256(text));
  job.git = git_provenance(experiment_file);
  return job;
}

nlohmann::json batch_script_data(const BatchJob& job) {
  const SlurmRequest& r = job.request;
  nlohmann::json data;
  nlohmann::json directives = nlohmann::json::array();
  for (const auto& d : job.directives) {
    const std::string source = printable(d.source);
    std::string line = d.flag;
    if (!d.value.empty()) line += "=" + sbatch_value(d.value, fmt::format("{} ({})", d.flag, source));
    // An unquoted # ends a directive for sbatch: the source rides along as a comment.
    directives.push_back({{"line", line}, {"source", source}});
  }
  data["directives"] = directives;
  data["experiment"] = printable(job.experiment.path);
  data["jobgen_version"] = HPCTRAIN_VERSION;
  data["git"] = printable(job.git);
  data["config_sha256"] = job.config_sha256;
  data["profile"] = printable(fmt::format("{} ({})", job.profile.name, fmt::join(job.profile.chain, " <- ")));

  nlohmann::json modules = nlohmann::json::array();
  for (const auto& m : job.profile.modules) modules.push_back(shell_word(m, "profile module " + m));
  data["modules"] = modules;
  nlohmann::json env = nlohmann::json::array();
  auto export_var = [&env](const std::string& name, const std::string& value, bool runtime, const std::string& where) {
    if (name.empty() ||
        name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
            std::string::npos ||
        (name[0] >= '0' && name[0] <= '9')) {
      throw EncodingError(fmt::format("{}: '{}' is not a shell variable name", where, name));
    }
    env.push_back(
        {{"name", name},
         {"value", runtime ? shell_expanding(value, where + " " + name) : shell_word(value, where + " " + name)}});
  };
  for (const auto& [name, value] : job.profile.env)
    export_var(name, value, false, "profile " + job.profile.name + " env");
  for (const auto& v : r.env) export_var(v.name, v.value, v.runtime, v.source + ": slurm.env");
  data["env"] = env;

  data["run_dir"] = shell_word(job.experiment.job.run_dir, "job.run_dir");
  data["log_dir"] = shell_word(r.log_dir.value, "slurm.log_dir");
  data["executable"] = shell_word(r.executable.value, "slurm.executable");
  data["mpi"] = shell_word(job.profile.mpi, "profile mpi");
  data["signal"] = r.signal.value;  // USR1, USR2 or TERM: checked by the reader
  data["max_restarts"] = r.max_restarts.value;
  data["requeue_exit_code"] = std::to_string(config::kRequeueExitCode);
  // The config travels inside the script, in a quoted here-document whose
  // delimiter cannot occur in it.
  std::string delimiter = "HPCTRAIN_CONFIG_" + job.config_sha256.substr(0, 16);
  while (("\n" + job.experiment.resolved_toml + "\n").find("\n" + delimiter + "\n") != std::string::npos)
    delimiter += "_";
  data["config_delimiter"] = delimiter;
  std::string toml = job.experiment.resolved_toml;
  if (!toml.empty() && toml.back() == '\n') toml.pop_back();
  data["config_toml"] = toml;
  return data;
}

std::string render_batch_script(const BatchJob& job, const std::string& template_name, const JobgenPaths& paths) {
  const std::filesystem::path file =
      template_name.find('/') != std::string::npos || template_name.ends_with(".mustache")
          ? std::filesystem::path(template_name)
          : paths.templates / (template_name + ".mustache");
  // Every template next to it is a partial, by file stem ({{>header}}).
  Partials partials;
  for (const auto& entry : std::filesystem::directory_iterator(file.parent_path().empty() ? "." : file.parent_path())) {
    if (entry.path().extension() == ".mustache") partials[entry.path().stem().string()] = read_text_file(entry.path());
  }
  return render_mustache(
      read_text_file(file), batch_script_data(job), partials, [](const std::string& v) { return v; }, file.string());
}

}  // namespace hpctrain::jobgen
