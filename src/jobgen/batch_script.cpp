#include "jobgen/batch_script.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "config/config_error.h"
#include "config/experiment_table.h"
#include "jobgen/data_file.h"
#include "jobgen/encoding.h"
#include "jobgen/mustache.h"
#include "jobgen/shell_command.h"
#include "support/build_info.h"
#include "support/sha256.h"

namespace hpctrain::jobgen {
namespace {

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

std::string dependency(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string id = spec.substr(0, colon);
  const std::string type = colon == std::string::npos ? "afterok" : spec.substr(colon + 1);
  const bool id_ok = !id.empty() && id.find_first_not_of("0123456789_") == std::string::npos && id[0] != '_';
  if (!id_ok || (type != "afterok" && type != "afterany" && type != "afternotok" && type != "aftercorr")) {
    throw config::ConfigError(
        fmt::format("--after {}: expected JOBID[:afterok|afterany|afternotok|aftercorr], JOBID a job (or array "
                    "task) id",
                    printable(spec)));
  }
  return type + ":" + id;
}

// The #SBATCH directives of a planned job, from its request, sweep and
// dependencies. `preemptible`: the training job's signal and requeue handling.
std::vector<Directive> directives_of(const BatchJob& job, const Dependencies& dependencies, bool preemptible) {
  const SlurmRequest& r = job.request;
  std::vector<Directive> d;
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
  // B: signals the batch shell (not the steps), whose trap forwards it to the step.
  if (preemptible && r.signal_lead_s.value != "0") {
    add(d, "--signal",
        {fmt::format("B:{}@{}", r.signal.value, r.signal_lead_s.value),
         r.signal.source + ", " + r.signal_lead_s.source});
  }
  for (const auto& o : r.site.sbatch) d.push_back({"--" + o.name, o.value, o.source});
  if (preemptible) {
    d.push_back({"--requeue", "", "preemption: the job requeues itself"});
    d.push_back({"--open-mode", "append", "one log across requeues"});
  }
  if (!job.sweep.points.empty()) {
    const std::string throttle = job.sweep.max_parallel > 0 ? fmt::format("%{}", job.sweep.max_parallel) : "";
    d.push_back({"--array", fmt::format("0-{}{}", job.sweep.points.size() - 1, throttle),
                 fmt::format("[sweep] {}: {} runs", config::name_of(job.sweep.mode), job.sweep.points.size())});
    add(d, "--output", {r.log_dir.value + "/%x-%A_%a.out", r.log_dir.source});
  } else {
    add(d, "--output", {r.log_dir.value + "/%x-%j.out", r.log_dir.source});
  }
  std::vector<std::string> after;
  after.reserve(dependencies.after.size() + 1);
  for (const auto& spec : dependencies.after) after.push_back(dependency(spec));
  if (dependencies.singleton) after.emplace_back("singleton");
  if (!after.empty()) {
    d.push_back({"--dependency", fmt::format("{}", fmt::join(after, ",")), "jobgen --after/--singleton"});
  }
  return d;
}

}  // namespace

BatchJob plan_batch_job(const std::string& experiment_file, const std::vector<std::string>& overrides,
                        const std::string& cluster, const Dependencies& dependencies, const JobgenPaths& paths) {
  // The file is read once; every reader below parses that one text.
  const config::ExperimentSource source(experiment_file, overrides);
  BatchJob job{source.resolve(), load_cluster_profile(cluster, paths), {}, {}, {}, {}, {}};
  job.request = read_slurm_request(source.table(), job.experiment, job.profile);
  job.sweep = read_sweep(source.table());
  // Every run of the sweep must be a valid experiment before anything is submitted.
  for (std::size_t i = 0; i < job.sweep.points.size(); ++i) {
    std::vector<std::string> point;
    for (const auto& [key, value] : job.sweep.points[i].overrides) point.push_back(fmt::format("{}={}", key, value));
    try {
      (void)source.resolve(point);
    } catch (const std::exception& e) {
      throw config::ConfigError(fmt::format("sweep index {}: {}", i, e.what()));
    }
  }
  job.directives = directives_of(job, dependencies, /*preemptible=*/true);
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
  data["jobgen_version"] = support::version_with_commit();
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
  // Words for the srun line, each one shell word with a space before it.
  std::string srun_options;
  for (const auto& word : r.site.srun) srun_options += " " + shell_word(word.value, word.source + ": srun argument");
  data["srun_options"] = srun_options;
  data["signal"] = r.signal.value;  // USR1, USR2 or TERM: checked by the reader
  data["max_restarts"] = r.max_restarts.value;
  data["on_preempt"] = r.on_preempt.value;  // requeue, resubmit or stop: checked by the reader
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

  if (job.sweep.points.empty()) {
    data["sweep"] = false;
  } else {
    nlohmann::json points = nlohmann::json::array();
    for (std::size_t i = 0; i < job.sweep.points.size(); ++i) {
      std::string args;
      for (const auto& [key, value] : job.sweep.points[i].overrides) {
        args += fmt::format("{}--set {}", args.empty() ? "" : " ",
                            shell_word(fmt::format("{}={}", key, value), "sweep " + key));
      }
      points.push_back({{"index", std::to_string(i)}, {"args", args}});
    }
    const std::string manifest = sweep_manifest(job.sweep).dump(2);
    data["sweep"] = {{"points", points},
                     {"manifest", manifest},
                     {"manifest_delimiter", "HPCTRAIN_SWEEP_" + job.config_sha256.substr(0, 16)}};
  }
  return data;
}

std::string explain(const BatchJob& job) {
  std::string out = fmt::format("{} with profile {} (config sha256 {})\n", printable(job.experiment.path),
                                printable(job.profile.name), job.config_sha256);
  for (const auto& d : job.directives) {
    // As the script has it: the encoded value.
    const std::string line = d.value.empty() ? d.flag : d.flag + "=" + sbatch_value(d.value, d.flag);
    out += fmt::format("  #SBATCH {:<44} <- {}\n", line, printable(d.source));
  }
  for (const auto& word : job.request.site.srun) {
    out += fmt::format("  srun {:<47} <- {}\n", shell_word(word.value, word.source), printable(word.source));
  }
  // Not directives, but what the script does on preemption: a profile may set them.
  out += fmt::format("  slurm.signal_lead_s = {:<30} <- {}\n", job.request.signal_lead_s.value,
                     printable(job.request.signal_lead_s.source));
  out += fmt::format("  slurm.on_preempt = {:<33} <- {}\n", job.request.on_preempt.value,
                     printable(job.request.on_preempt.source));
  if (!job.request.site.extra_checked_by.empty()) {
    out += fmt::format("  [slurm.extra]: {}\n", job.request.site.extra_checked_by);
  }
  for (const auto& [name, value] : job.profile.env) {
    out += fmt::format("  export {:<45} <- profile {}\n", printable(fmt::format("{}={}", name, value)),
                       printable(job.profile.name));
  }
  for (const auto& v : job.request.env) {
    out += fmt::format("  export {:<45} <- {}\n", printable(v.name + "=" + v.value), printable(v.source));
  }
  for (std::size_t i = 0; i < job.sweep.points.size(); ++i) {
    std::string args;
    for (const auto& [key, value] : job.sweep.points[i].overrides) args += fmt::format(" {}={}", key, value);
    out += fmt::format("  array index {}:{}\n", i, printable(args));
  }
  return out;
}

BatchJob preparation_job(BatchJob job, const Dependencies& dependencies) {
  // A sweep that varies [data] has a data set per point: one job cannot
  // prepare them all, and preparing the first would mislead.
  for (std::size_t i = 0; i < job.sweep.points.size(); ++i) {
    for (const auto& [key, value] : job.sweep.points[i].overrides) {
      if (key.starts_with("data.")) {
        throw config::ConfigError(fmt::format(
            "jobgen --prepare: sweep index {} sets {}, so the sweep's runs have data sets of their own; prepare each "
            "with `jobgen EXP.toml --prepare --set {}={}`",
            i, key, key, value));
      }
    }
  }
  job.sweep.points.clear();
  SlurmRequest& r = job.request;
  const std::string why = "jobgen --prepare: one task";
  r.job_name.value += "-prepare";
  r.job_name.source += ", with -prepare (jobgen --prepare)";
  r.nodes = {"1", why};
  r.ntasks_per_node = {"1", why};
  // Tokenizing runs on every core the job is given (data.threads = 0): the
  // node's as the profile states them; else the experiment's
  // slurm.cpus_per_task; else the whole node (sbatch would give one CPU).
  bool whole_node = false;
  if (job.profile.cpus_per_node > 0) {
    r.cpus_per_task = {std::to_string(job.profile.cpus_per_node),
                       fmt::format("jobgen --prepare: profile {} cpus_per_node", job.profile.name)};
  } else if (r.cpus_per_task.value == "0") {
    whole_node = true;
  }
  r.gpus_per_node = {"0", "jobgen --prepare: no GPU"};
  // Every way a site asks for GPUs: --gpus*, --gpu-bind, --*-per-gpu, and
  // --gres or --tres-* naming a gpu.
  std::erase_if(r.site.sbatch, [](const SbatchOption& o) {
    return o.name.starts_with("gpu") || o.name.ends_with("-per-gpu") ||
           ((o.name == "gres" || o.name.starts_with("tres")) && o.value.find("gpu") != std::string::npos);
  });
  std::erase_if(r.site.srun, [](const Sourced& word) { return word.value.starts_with("--gpu"); });
  job.directives = directives_of(job, dependencies, /*preemptible=*/false);
  if (whole_node && std::none_of(r.site.sbatch.begin(), r.site.sbatch.end(),
                                 [](const SbatchOption& o) { return o.name == "exclusive"; })) {
    job.directives.push_back(
        {"--exclusive", "",
         fmt::format("jobgen --prepare: the whole node (profile {} states no cpus_per_node)", job.profile.name)});
  }
  return job;
}

std::string submit(const BatchJob& job, const std::string& script) {
  const char* tmpdir = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe): read before any thread
  const std::filesystem::path dir = tmpdir != nullptr && *tmpdir != '\0' ? tmpdir : "/tmp";
  std::string file = (dir / "jobgen-XXXXXX.sbatch").string();
  const int fd = mkstemps(file.data(), 7);
  if (fd < 0) {
    throw RenderError(fmt::format("cannot create a temporary file for sbatch in {} (TMPDIR)", printable(dir.string())));
  }
  // The temporary script is ours: it goes, whatever happens below.
  const std::unique_ptr<const std::string, void (*)(const std::string*)> cleanup(
      &file, [](const std::string* path) { (void)std::remove(path->c_str()); });
  {
    const std::unique_ptr<FILE, int (*)(FILE*)> out(fdopen(fd, "w"), fclose);
    if (!out || std::fwrite(script.data(), 1, script.size(), out.get()) != script.size() ||
        std::fflush(out.get()) != 0) {
      throw RenderError(fmt::format("{}: cannot write the script", file));
    }
  }
  // SLURM opens the log before the script runs. The directories made here
  // for it go again if sbatch refuses the job (while still empty: never
  // anything jobgen did not create).
  std::vector<std::filesystem::path> made;
  for (std::filesystem::path d = job.request.log_dir.value; !d.empty() && !std::filesystem::exists(d);
       d = d.parent_path()) {
    made.push_back(d);
    if (d == d.parent_path()) break;
  }
  std::filesystem::create_directories(job.request.log_dir.value);
  // sbatch's exit status says whether it queued the job; the id is its last
  // line (--parsable: ID or ID;CLUSTER), after any warnings it printed first.
  const CommandResult answer = run_command("sbatch --parsable " + shell_word(file, "script") + " 2>&1");
  if (answer.status == -1 || !WIFEXITED(answer.status) || WEXITSTATUS(answer.status) != 0) {
    for (const auto& d : made) {
      std::error_code ignored;
      std::filesystem::remove(d, ignored);  // deepest first; a directory no longer empty stays
    }
    throw RenderError(fmt::format("sbatch refused the script: {}", printable(first_line(answer.output))));
  }
  std::string last = answer.output;
  while (!last.empty() && last.back() == '\n') last.pop_back();
  if (const auto cut = last.find_last_of('\n'); cut != std::string::npos) last.erase(0, cut + 1);
  if (last.empty() || last.find_first_not_of("0123456789;") != std::string::npos || last[0] == ';') {
    // Queued (exit 0), so its log directory stays.
    throw RenderError(fmt::format("sbatch exited 0 but printed no job id last: {}", printable(answer.output)));
  }
  return "submitted batch job " + last.substr(0, last.find(';'));
}

std::string render_batch_script(const BatchJob& job, const std::string& template_name, const JobgenPaths& paths) {
  const std::filesystem::path file = paths.template_file(template_name);
  // A partial is the template of that name next to it ({{>header}} is
  // header.mustache), read when the template includes it.
  const std::filesystem::path dir = file.parent_path().empty() ? "." : file.parent_path();
  const PartialSource partials = [dir](const std::string& name) -> std::optional<std::string> {
    if (name.empty() || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") !=
                            std::string::npos) {
      throw RenderError(fmt::format("partial '{}': a partial is named by letters, digits, _ and -", printable(name)));
    }
    const auto path = dir / (name + ".mustache");
    if (!std::filesystem::exists(path)) return std::nullopt;
    return read_text_file(path);
  };
  return render_mustache(
      read_text_file(file), batch_script_data(job), partials, [](const std::string& v) { return v; }, file.string());
}

}  // namespace hpctrain::jobgen
