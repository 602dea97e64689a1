// The [slurm] keys that real sites need and the quickstart does not: GPU and
// CPU binding, exclusive nodes, reservations, node lists, mail, extra srun
// arguments, and [slurm.extra] for any other sbatch long option
// ("mem-per-gpu" = "40G"), so that a site's flags never need a forked
// template. Every value is checked here and encoded where the script uses it
// (encoding.h); each [slurm.extra] option is put to the installed sbatch's own
// option parser, when sbatch can run here.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

#include "config/section_reader.h"
#include "jobgen/sourced.h"

namespace hpctrain::jobgen {

// One `#SBATCH --name[=value]` line.
struct SbatchOption {
  std::string name;   // "mem-per-gpu": the long option without its dashes
  std::string value;  // empty for a bare flag (--exclusive)
  std::string source;
  bool extra = false;  // from [slurm.extra]
};

struct SiteOptions {
  std::vector<SbatchOption> sbatch;  // slurm.gpus_per_task ... slurm.mail_user, then [slurm.extra]
  std::vector<Sourced> srun;         // words for the srun line: --cpu-bind, --gpu-bind, slurm.srun_args
  std::string extra_checked_by;      // how [slurm.extra]'s names were checked, for --explain
};

// Takes [slurm.extra] out of `slurm` (so that the section reader does not see
// it as an unknown key) and reads it: a table of long option names to a
// string, an integer, or a boolean (true: a bare flag, false: left out).
std::vector<SbatchOption> take_sbatch_extra(toml::table& slurm);

// The site keys of [slurm], read through the section's reader.
SiteOptions read_site_options(config::SectionReader& reader, const toml::table* slurm);

// Refuses an extra option jobgen sets itself, naming the key to use instead;
// then appends `extra` to the site's sbatch options.
void add_sbatch_extra(SiteOptions& site, const std::vector<SbatchOption>& extra);

// Puts each [slurm.extra] option to the installed sbatch's own parser
// (`sbatch --NAME=VALUE --version` parses the option and submits nothing) and
// refuses one it rejects, with sbatch's message. Does nothing where sbatch
// cannot run (not installed, or no SLURM configuration on this machine) and
// says so in `extra_checked_by`. Run by jobgen's main, not by the planner,
// which the fuzz harnesses drive.
void ask_sbatch_about_extra(SiteOptions& site);

}  // namespace hpctrain::jobgen
