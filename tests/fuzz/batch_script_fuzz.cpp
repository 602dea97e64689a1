// Fuzz harness: jobgen's encoders (directive, shell word, run-time value) in
// the batch script they produce. The input is a list of strings separated by
// NUL bytes, which become the string fields of an experiment ([job] name and
// run_dir; [slurm] partition, account, constraint, log_dir, executable; one
// literal and two run-time [slurm.env] values; a [sweep] over eval.prompt).
// Whatever the strings, either jobgen refuses them with a ConfigError or
// EncodingError, or the rendered script
//   1. passes `bash -n`, and
//   2. run by bash with stub SLURM tools (srun, scontrol, sbatch, mkdir, cat, mv:
//      the only commands on PATH, each exiting 0), executes nothing but the
//      script's own commands: a DEBUG trap inherited by every subshell logs
//      each command, and the run must start no subshell (a command
//      substitution is one) and no command whose name a benign rendering of
//      the same experiment does not run.
// A violation aborts, which libFuzzer reports as a crash with the input.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_error.h"
#include "jobgen/batch_script.h"
#include "jobgen/encoding.h"
#include "split_input.h"

namespace {

namespace fs = std::filesystem;
using hpctrain::jobgen::BatchJob;

constexpr std::size_t kFields = 12;

// A TOML basic string holding `text` exactly (every control character escaped).
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      std::array<char, 8> hex{};
      (void)std::snprintf(hex.data(), hex.size(), "\\u%04X", u);
      out += hex.data();
    } else {
      out += c;
    }
  }
  return out + '"';
}

std::string experiment_text(const std::vector<std::string>& f) {
  std::ostringstream t;
  t << "[job]\nname = " << toml_string(f[0]) << "\nrun_dir = " << toml_string(f[1]) << "\n"
    << "[slurm]\npartition = " << toml_string(f[2]) << "\naccount = " << toml_string(f[3])
    << "\nconstraint = " << toml_string(f[4]) << "\nlog_dir = " << toml_string(f[5])
    << "\nexecutable = " << toml_string(f[6]) << "\n"
    << "[slurm.env]\nHPCTRAIN_A = " << toml_string(f[7]) << "\nHPCTRAIN_B = { runtime = " << toml_string(f[8])
    << " }\nHPCTRAIN_C = { runtime = " << toml_string(f[9]) << " }\n";
  if (!f[10].empty() || !f[11].empty()) {
    t << "[sweep.parameters]\n\"eval.prompt\" = [" << toml_string(f[10]) << ", " << toml_string(f[11]) << "]\n";
  }
  return t.str();
}

struct Sandbox {
  fs::path root;
  fs::path bin;
  fs::path source_dir = HPCTRAIN_SOURCE_DIR;

  Sandbox() {
    std::string pattern = (fs::temp_directory_path() / "hpctrain-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    root = pattern;
    bin = root / "bin";
    fs::create_directories(bin);
    for (const char* tool : {"srun", "scontrol", "sbatch", "mkdir", "cat", "mv"}) {
      const fs::path stub = bin / tool;
      std::ofstream(stub) << "#!/bin/sh\nexit 0\n";
      fs::permissions(stub, fs::perms::owner_all);
    }
  }
  ~Sandbox() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  Sandbox(const Sandbox&) = delete;
  Sandbox& operator=(const Sandbox&) = delete;
};

Sandbox& sandbox() {
  static Sandbox box;
  return box;
}

// Runs argv with a clean environment; returns the exit status (-1: killed or
// timed out). The child's stdout and stderr go to /dev/null.
int run(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) std::abort();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    alarm(10);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The commands a run of `script` executed: "<subshell depth> <first word>" per line.
std::vector<std::pair<int, std::string>> commands_run(const std::string& script) {
  Sandbox& box = sandbox();
  const fs::path file = box.root / "job.sbatch";
  const fs::path log = box.root / "commands.log";
  std::ofstream(file, std::ios::trunc) << script;
  fs::remove(log);
  // printf is a builtin: the trap runs no command of its own.
  const std::string driver = "set -T; trap 'printf \"%s %s\\n\" \"$BASH_SUBSHELL\" \"${BASH_COMMAND%% *}\" >>" +
                             log.string() + "' DEBUG; . " + file.string();
  (void)run({"/bin/bash", "-c", driver},
            {"PATH=" + box.bin.string(), "HOME=" + box.root.string(), "SLURM_JOB_ID=4242", "SLURM_ARRAY_JOB_ID=4242",
             "SLURM_ARRAY_TASK_ID=0", "SLURM_JOB_NODELIST=node1", "SLURM_RESTART_COUNT=0"});
  std::vector<std::pair<int, std::string>> out;
  std::ifstream in(log);
  int depth = 0;
  std::string word;
  while (in >> depth && std::getline(in >> std::ws, word)) {
    const auto eq = word.find('=');
    if (eq != std::string::npos && word.find_first_of("[$\"'") > eq) word.resize(eq + 1);  // NAME=...
    out.emplace_back(depth, word);
  }
  return out;
}

std::string render(const std::string& experiment) {
  Sandbox& box = sandbox();
  const fs::path file = box.root / "experiment.toml";
  std::ofstream(file, std::ios::trunc) << experiment;
  const hpctrain::jobgen::JobgenPaths paths{box.source_dir / "templates", box.source_dir / "env" / "clusters"};
  const BatchJob job = hpctrain::jobgen::plan_batch_job(file.string(), {}, "local", {}, paths);
  return hpctrain::jobgen::render_batch_script(job, "sbatch", paths);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> fields = hpctrain::fuzz::split_at_nul(data, size);
  fields.resize(kFields);
  std::string script;
  try {
    script = render(experiment_text(fields));
  } catch (const hpctrain::config::ConfigError&) {
    return 0;  // refused, naming the field
  } catch (const hpctrain::jobgen::EncodingError&) {
    return 0;
  }
  const fs::path file = sandbox().root / "syntax.sbatch";
  std::ofstream(file, std::ios::trunc) << script;
  if (run({"/bin/bash", "-n", file.string()}, {"PATH=/usr/bin:/bin"}) != 0) {
    (void)std::fprintf(stderr, "batch_script_fuzz: the rendered script fails bash -n\n%s\n", script.c_str());
    std::abort();
  }
  // The same experiment with plain values: the commands the script itself runs.
  const bool sweep = !fields[10].empty() || !fields[11].empty();
  static std::array<std::set<std::string>, 2> own_commands;
  std::set<std::string>& own = own_commands[sweep ? 1 : 0];
  if (own.empty()) {
    std::vector<std::string> benign = {"job", "runs/job", "debug", "acct", "cpu", "logs", "hpctrain", "a", "b", "c"};
    benign.emplace_back(sweep ? "p" : "");
    benign.emplace_back(sweep ? "q" : "");
    for (const auto& [depth, word] : commands_run(render(experiment_text(benign)))) own.insert(word);
  }
  for (const auto& [depth, word] : commands_run(script)) {
    if (depth > 0 || own.count(word) == 0) {
      (void)std::fprintf(stderr, "batch_script_fuzz: the script ran '%s' (subshell depth %d)\n%s\n", word.c_str(),
                         depth, script.c_str());
      std::abort();
    }
  }
  return 0;
}
